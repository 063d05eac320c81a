package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// deadStoreEnv names the store of TestLocksDeadHelper's backup.
const deadStoreEnv = "CLOUDSTIC_CLI_DEAD_STORE"

// TestLocksDeadHelper is the helper process of TestLocksShowDeadHolder: a
// real backup of its standard input, which the test never closes, so the
// backup holds its shared lock until it is killed. It does nothing in a
// normal test run.
func TestLocksDeadHelper(t *testing.T) {
	storeDir := os.Getenv(deadStoreEnv)
	if storeDir == "" {
		t.Skip("helper for TestLocksShowDeadHolder")
	}
	code := Main(context.Background(), []string{"backup", "-stdin", "-password", "pw", "-store", "local:" + storeDir},
		IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: func(string) string { return "" }})
	t.Fatalf("backup of a stdin that never ends exited %d", code)
}

// After kill -9 of a backup on this host, locks shows its lock dead at
// once, a prune it blocks says to run break-lock -stale-only, and that
// removes it (no TTL to wait for).
func TestLocksShowDeadHolder(t *testing.T) {
	dir := t.TempDir()
	uxOK(t, dir, "init", "-password", "pw")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestLocksDeadHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), deadStoreEnv+"="+filepath.Join(dir, "store"))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	stdin, err := cmd.StdinPipe() // kept open: the backup waits for more input
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()                       //nolint:errcheck // the pipe to a killed process: nothing to report
	defer func() { _ = cmd.Process.Kill() }() // if the test fails before the kill
	var docs []lockDoc
	for deadline := time.Now().Add(time.Minute); len(docs) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the helper's backup took no lock within a minute")
		}
		uxJSON(t, uxOK(t, dir, "locks", "-json").stdout, &docs)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait() // its error is the signal
	holder := "(pid " + strconv.Itoa(cmd.Process.Pid) + ")"

	uxJSON(t, uxOK(t, dir, "locks", "-json").stdout, &docs)
	if len(docs) != 1 || !docs[0].Dead || docs[0].Stale || !strings.HasSuffix(docs[0].Holder, holder) {
		t.Fatalf("locks -json after kill -9: %+v; want the backup's lock, dead, not stale", docs)
	}
	if r := uxOK(t, dir, "locks"); !strings.Contains(r.stdout, "shared  dead") {
		t.Errorf("locks does not show the lock dead:\n%s", r.stdout)
	}
	r := uxRun(t, dir, "prune", "-password", "pw")
	if r.code != ExitError || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Fatalf("prune: exit %d, want %d and one line:\n%s", r.code, ExitError, r.stderr)
	}
	for _, want := range []string{holder + " (operation: backup, acquired: ", ", dead: its process is gone)",
		"; run cloudstic break-lock -stale-only to remove the locks of dead holders, retry with -lock-wait 10m, or see cloudstic locks\n"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("prune's refusal lacks %q:\n%s", want, r.stderr)
		}
	}
	if r := uxOK(t, dir, "break-lock", "-stale-only"); !strings.Contains(r.stdout, "removed "+docs[0].Key) {
		t.Fatalf("break-lock -stale-only:\n%s", r.stdout)
	}
	if r := uxOK(t, dir, "locks"); !strings.Contains(r.stdout, "no locks") {
		t.Fatalf("after break-lock -stale-only:\n%s", r.stdout)
	}
	uxOK(t, dir, "prune", "-password", "pw")
}
