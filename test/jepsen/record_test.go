//go:build unix

package jepsen

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/test/testbin"
)

// The binary records its leases when CLOUDSTIC_TEST_HISTORY names a file:
// concurrent backups and a prune on one repository leave a history the
// checker reads, with every process's acquisitions, releases and exit.
func TestBinaryRecordsHistory(t *testing.T) {
	dir := t.TempDir()
	hist := filepath.Join(dir, "history.jsonl")
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "a"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) *exec.Cmd {
		c := exec.Command(binary, append(args, "-store", "local:"+filepath.Join(dir, "repo"))...)
		c.Env = append(os.Environ(), "CLOUDSTIC_TEST_HISTORY="+hist, "CLOUDSTIC_PASSWORD=pw")
		return c
	}
	if _, stderr, code := testbin.Output(t, run("init")); code != 0 {
		t.Fatalf("init: %s", stderr)
	}
	// All three wait for the lock: a backup that finds the prune queued
	// before it would otherwise fail at once (writer preference).
	cmds := []*exec.Cmd{run("backup", "-lock-wait", "30s", "-source", "local:"+src),
		run("backup", "-lock-wait", "30s", "-source", "local:"+src), run("prune", "-lock-wait", "30s")}
	for _, c := range cmds {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("%v: %v", c.Args, err)
		}
	}
	f, err := os.Open(hist)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close() //nolint:errcheck // read-only
	events, err := Read(f)
	if err != nil {
		t.Fatal(err)
	}
	rep := Check(events)
	var kinds []string
	for _, e := range events {
		kinds = append(kinds, e.Event)
	}
	t.Logf("%d events: %s", len(events), strings.Join(kinds, " "))
	if len(rep.Violations) != 0 || rep.Shared != 2 || rep.Exclusive != 1 {
		t.Fatalf("report %+v", rep)
	}
	if n := strings.Count(strings.Join(kinds, " "), "exit"); n != 4 {
		t.Fatalf("%d exit events, want 4 (init, two backups, prune)", n)
	}
}
