//go:build linux || windows

package lock

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/store/local"
)

// goneDirEnv names the store of the TestGoneHelper process.
const goneDirEnv = "CLOUDSTIC_LOCK_GONE_DIR"

// TestGoneHelper is the helper process of TestGoneHolder: it takes a shared
// lock with the default options, says so, and holds it until killed. It
// does nothing in a normal test run.
func TestGoneHelper(t *testing.T) {
	dir := os.Getenv(goneDirEnv)
	if dir == "" {
		t.Skip("helper for TestGoneHolder")
	}
	l, err := AcquireShared(context.Background(), local.New(dir), "backup", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stdout.WriteString("held " + l.Info().Key + "\n"); err != nil {
		t.Fatal(err)
	}
	<-l.Context().Done() // until killed (or a lost lease)
	t.Fatal(context.Cause(l.Context()))
}

// holdAndKill starts TestGoneHelper on dir, waits until it holds its lock,
// kills it (SIGKILL, TerminateProcess) and reaps it. It returns the helper's lock key.
func holdAndKill(t *testing.T, dir string) (key string, pid int) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestGoneHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), goneDirEnv+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait() // killed: its error is the signal
	key, ok := strings.CutPrefix(strings.TrimSpace(line), "held ")
	if err != nil || !ok {
		t.Fatalf("helper said %q, %v", line, err)
	}
	return key, cmd.Process.Pid
}

// A lock whose holder ran on this host and was killed is gone at once:
// List says so, an acquire it blocks says so (ErrHolderDead), and
// break-lock -stale-only removes it. The same record of a process in
// another pid namespace or boot, or of a live process, is never judged.
func TestGoneHolder(t *testing.T) {
	ctx := context.Background()
	self, ok := platformProcesses().self()
	if !ok {
		t.Skip("this process cannot identify itself (Linux: /proc is not its pid namespace's; Windows: a container): nothing is judged here")
	}
	st := local.New(t.TempDir())
	key, pid := holdAndKill(t, st.Root())
	infos, err := List(ctx, st, Options{})
	if err != nil || len(infos) != 1 || infos[0].Key != key || !infos[0].Dead || infos[0].Stale {
		t.Fatalf("list after kill -9: %+v, %v; want one lock, gone, not stale", infos, err)
	}
	_, err = AcquireExclusive(ctx, st, "prune", Options{})
	if !errors.Is(err, ErrLocked) || !errors.Is(err, ErrHolderDead) || !strings.Contains(err.Error(), ", dead: its process is gone)") {
		t.Fatalf("prune: %v; want a refusal naming a gone holder", err)
	}
	removed, err := Break(ctx, st, true, Options{})
	if err != nil || len(removed) != 1 || removed[0].Key != key {
		t.Fatalf("break-lock -stale-only: %+v, %v", removed, err)
	}

	// The same holder recorded as others would see it.
	dead := self
	dead.PID, dead.Start = pid, 1
	cases := []struct {
		name string
		edit func(p *procID)
		want procState
	}{
		{"killed process", func(*procID) {}, procGone},
		{"another pid namespace", func(p *procID) { p.PIDNS = "pid:[1]" }, procUnknown},
		{"another boot", func(p *procID) { p.BootID = "another" }, procUnknown},
		{"another host", func(p *procID) { p.Host = "elsewhere" }, procUnknown},
		{"live process", func(p *procID) { *p = self }, procAlive},
		{"pid reused by a later process", func(p *procID) { *p = self; p.Start++ }, procGone},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := dead
			c.edit(&p)
			if got := judgeProcess(platformProcesses(), self, true, &p); got != c.want {
				t.Errorf("judged %d, want %d", got, c.want)
			}
			// And as List reads it from a lock object.
			st := local.New(t.TempDir())
			now := time.Now().UTC()
			writeLock(t, st, SharedPrefix+"x", payload{Operation: "backup", Holder: "h (pid 1)", AcquiredAt: now,
				ExpiresAt: now.Add(time.Minute), IsShared: true, Process: &p})
			infos, err := List(ctx, st, Options{})
			if err != nil || len(infos) != 1 || infos[0].Dead != (c.want == procGone) {
				t.Errorf("list: %+v, %v", infos, err)
			}
		})
	}
}
