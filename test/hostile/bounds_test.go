//go:build unix

package hostile

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/test/testbin"
)

// The tests of this file plant, as an attacker with write access to the
// store but no password would, objects that make a naive reader allocate
// without end or wait forever, and run the binary against them under a
// memory limit and a deadline: each run must end with a one-line error and
// exit 1, not run out of memory or hang.

// memLimitKB is the address space (ulimit -v) of every run below: 3 GiB.
// A normal run needs less than 2 GiB of it (the Go runtime reserves far
// more address space than it uses: measured on this repository's small
// test repositories, `list` succeeds under 2 GiB 20 times out of 20 and
// fails now and then under 1.8 GiB), so each test first checks that a
// normal run succeeds under the limit. Reading a link to /dev/zero or an
// 8 GiB object whole needs more: the old code died of "fatal error: out of
// memory" on each.
const memLimitKB = 3 << 20

// runDeadline bounds each run: the old code waited forever on a FIFO.
const runDeadline = time.Minute

// runLimited is run under ulimit -v memLimitKB, killed at runDeadline.
func runLimited(t *testing.T, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runDeadline)
	defer cancel()
	// bash -c 'ulimit -v N && exec "$@"' bash BINARY ARGS...
	c := exec.CommandContext(ctx, "bash", append([]string{"-c", fmt.Sprintf(`ulimit -v %d && exec "$@"`, memLimitKB), "bash", binary}, args...)...)
	c.Env = environWithout("CLOUDSTIC_")
	// A FIFO open blocks in the kernel: kill, do not wait for an
	// interrupt the old code could not act on.
	c.Cancel = func() error { return c.Process.Kill() }
	res := result{args: args}
	res.stdout, res.stderr, res.code = testbin.Output(t, c)
	if ctx.Err() != nil {
		t.Fatalf("did not finish within %v (blocked?): %v", runDeadline, res)
	}
	for _, crash := range []string{"panic:", "goroutine ", "fatal error", "out of memory"} {
		if strings.Contains(res.stderr, crash) {
			t.Fatalf("crashed (%q): %v", crash, res)
		}
	}
	return res
}

// environWithout is this process's environment without the variables
// whose names start with prefix.
func environWithout(prefix string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, prefix) {
			env = append(env, kv)
		}
	}
	return env
}

// mustSucceedLimited runs args under the limits and fails t unless they
// succeed: the limits leave room for a normal run.
func mustSucceedLimited(t *testing.T, args ...string) {
	t.Helper()
	if res := runLimited(t, args...); res.code != 0 {
		t.Fatalf("a normal run fails under ulimit -v %d KiB: %v", memLimitKB, res)
	}
}

// plantSparse makes p a file of size bytes that takes no space (a sparse
// file): an object as large as an attacker likes.
func plantSparse(t *testing.T, p string, size int64) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// replace removes p (a file or directory) and calls plant on its path.
func replace(t *testing.T, p string, plant func(p string) error) {
	t.Helper()
	if err := os.RemoveAll(p); err != nil {
		t.Fatal(err)
	}
	if err := plant(p); err != nil {
		t.Fatal(err)
	}
}

func linkToDevZero(p string) error { return os.Symlink("/dev/zero", p) }
func fifo(p string) error          { return syscall.Mkfifo(p, 0o600) }

// TestUnboundedObjectsLocal plants in a local store a config that is a
// link to /dev/zero (the old code grew to 23 GB), a FIFO (the old code
// waited for a writer until a second signal) or an 8 GiB file, an
// exclusive lock that is a link to /dev/zero (backup and restore died of
// out of memory and break-lock could not remove it), and a snapshots
// directory that is a link to an empty directory or a file (the old code
// listed no snapshots and check said all was well). Each command ends with
// a one-line error naming the object and exit 1.
func TestUnboundedObjectsLocal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		plant func(t *testing.T, st string)
		cmds  func(src, out string) [][]string // each fails with one line holding every sub
		subs  []string
	}{
		{"config is a link to /dev/zero", func(t *testing.T, st string) {
			replace(t, filepath.Join(st, "config"), linkToDevZero)
		}, func(src, _ string) [][]string { return [][]string{{"list"}, {"backup", "-source", "local:" + src}} },
			[]string{"config is a symbolic link", "not a regular file"}},
		{"config is a FIFO", func(t *testing.T, st string) {
			replace(t, filepath.Join(st, "config"), fifo)
		}, listOnly, []string{"config is a FIFO"}},
		{"config of 8 GiB", func(t *testing.T, st string) {
			plantSparse(t, filepath.Join(st, "config"), 8<<30)
		}, listOnly, []string{"config: 8589934592 bytes", "object too large"}},
		{"exclusive lock is a link to /dev/zero", func(t *testing.T, st string) {
			replace(t, filepath.Join(st, "index", "lock.exclusive"), linkToDevZero)
		}, func(src, out string) [][]string {
			return [][]string{{"backup", "-source", "local:" + src}, {"restore", "-output", out}, {"prune"}}
		}, []string{"lock.exclusive is a symbolic link", "break-lock"}},
		{"snapshots is a link to an empty directory", func(t *testing.T, st string) {
			replace(t, filepath.Join(st, "snapshots"), func(p string) error { return os.Symlink(t.TempDir(), p) })
		}, listAndCheck, []string{"snapshots is a symbolic link", "not a directory"}},
		{"snapshots is a file", func(t *testing.T, st string) {
			replace(t, filepath.Join(st, "snapshots"), func(p string) error { return os.WriteFile(p, nil, 0o600) })
		}, listAndCheck, []string{"snapshots is a regular file", "not a directory"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st, flags, src := repoWithBackup(t)
			mustSucceedLimited(t, append([]string{"list"}, flags...)...)
			tc.plant(t, st)
			for _, cmd := range tc.cmds(src, filepath.Join(t.TempDir(), "restored")) {
				res := runLimited(t, append(cmd, flags...)...)
				if cmd[0] == "check" {
					wantLastLine(t, res, 1, tc.subs...) // after its progress lines
				} else {
					wantOneLine(t, res, 1, tc.subs...)
				}
			}
		})
	}
}

// wantLastLine checks the exit code and that the last line of stderr is
// the command's error, holding every sub.
func wantLastLine(t *testing.T, res result, code int, subs ...string) {
	t.Helper()
	if res.code != code {
		t.Errorf("exit %d, want %d: %v", res.code, code, res)
	}
	lines := strings.Split(strings.TrimRight(res.stderr, "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "cloudstic ") {
		t.Errorf("stderr does not end with an error line: %v", res)
	}
	for _, sub := range subs {
		if !strings.Contains(last, sub) {
			t.Errorf("error %q does not mention %q", last, sub)
		}
	}
}

func listOnly(_, _ string) [][]string     { return [][]string{{"list"}} }
func listAndCheck(_, _ string) [][]string { return [][]string{{"list"}, {"check"}} }

// TestUnreadableLockRemoved: an exclusive lock that is a link to /dev/zero
// is listed by locks as unreadable, kept by break-lock -stale-only,
// removed by break-lock, after which backup runs (the old code's locks
// and break-lock read it until memory ran out).
func TestUnreadableLockRemoved(t *testing.T) {
	t.Parallel()
	st, flags, src := repoWithBackup(t)
	lockFile := filepath.Join(st, "index", "lock.exclusive")
	replace(t, lockFile, linkToDevZero)
	res := runLimited(t, append([]string{"locks"}, flags...)...)
	if res.code != 0 || !strings.Contains(res.stdout, "unreadable") || !strings.Contains(res.stdout, "symbolic link") {
		t.Errorf("locks: %v", res)
	}
	// The store tells no size or time of a link, and nothing was read.
	if strings.Contains(res.stdout, "0001-01-01") || strings.Contains(res.stdout, "first bytes") {
		t.Errorf("locks shows a size, time or bytes it does not have: %v", res)
	}
	res = runLimited(t, append([]string{"break-lock", "-stale-only"}, flags...)...)
	if _, err := os.Lstat(lockFile); res.code != 0 || err != nil {
		t.Errorf("break-lock -stale-only removed an unreadable lock (%v): %v", err, res)
	}
	res = runLimited(t, append([]string{"break-lock"}, flags...)...)
	if _, err := os.Lstat(lockFile); res.code != 0 || !os.IsNotExist(err) {
		t.Errorf("break-lock left the lock (%v): %v", err, res)
	}
	mustSucceedLimited(t, append([]string{"backup", "-source", "local:" + src}, flags...)...)
}

// TestOversizedSnapshotLocal plants an 8 GiB object among the snapshots:
// list skips it as damaged, naming it, under the memory limit, without
// reading it, and lists the real snapshot.
func TestOversizedSnapshotLocal(t *testing.T) {
	t.Parallel()
	st, flags, _ := repoWithBackup(t)
	const name = "5ab0000000000000000000000000000000000000000000000000000000000000"
	plantSparse(t, filepath.Join(st, "snapshots", name), 8<<30)
	wantSkipped(t, runLimited(t, append([]string{"list"}, flags...)...), name)
}

// wantSkipped checks that list succeeded, listing one snapshot, and warned
// that the snapshots/ object name was skipped as too large.
func wantSkipped(t *testing.T, res result, name string) {
	t.Helper()
	if res.code != 0 || !strings.Contains(res.stderr, "snapshots/"+name) || !strings.Contains(res.stderr, "object too large") ||
		strings.Count(res.stdout, "local:") != 1 {
		t.Errorf("list: want exit 0, the real snapshot and a warning naming snapshots/%s as too large: %v", name, res)
	}
}
