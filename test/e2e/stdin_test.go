//go:build unix

package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// streamData is n bytes of seeded pseudo-random data, generated as it is
// read (ChaCha8 makes GB/s, so the stream, not its source, is measured).
func streamData(seed uint64, n int64) io.Reader {
	var s [32]byte
	s[0] = byte(seed)
	return io.LimitReader(rand.NewChaCha8(s), n)
}

// runStdin runs the binary with in as its standard input; it returns the
// result and the peak resident set size of the cloudstic process in KiB
// (wait4's rusage: the process alone, not the command it ran).
func runStdin(t *testing.T, in io.Reader, args ...string) (result, int64) {
	t.Helper()
	c := runOpts{}.cmd(args)
	c.Stdin = in
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	err := c.Run()
	res := result{args: args, stdout: stdout.String(), stderr: stderr.String(), code: c.ProcessState.ExitCode()}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running cloudstic: %v", err)
	}
	return res, c.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
}

// stdinBytes is the length of the stream TestBackupStdinBoundedMemory
// sends: 256 MiB in CI, CLOUDSTIC_STDIN_BYTES for the 2 GB run
// (scripts/bench.sh).
func stdinBytes(t *testing.T) int64 {
	n := int64(256 << 20)
	if v := os.Getenv("CLOUDSTIC_STDIN_BYTES"); v != "" {
		var err error
		if n, err = strconv.ParseInt(v, 10, 64); err != nil {
			t.Fatalf("CLOUDSTIC_STDIN_BYTES=%q: %v", v, err)
		}
	}
	return n
}

// TestBackupStdinBoundedMemory streams incompressible data through
// backup -stdin: the process's peak RSS stays under 150 MiB, and the
// restored file is byte for byte the stream.
func TestBackupStdinBoundedMemory(t *testing.T) {
	r := newLocalRepo(t)
	n := stdinBytes(t)
	res, rss := runStdin(t, streamData(1, n), r.with("backup", "-json", "-stdin", "-stdin-filename", "big.bin")...)
	wantCode(t, res, 0)
	t.Logf("backup -stdin of %d MiB: peak RSS %d MiB", n>>20, rss>>10)
	if rss > 150<<10 {
		t.Errorf("peak RSS %d MiB for a %d MiB stream, want < 150 MiB", rss>>10, n>>20)
	}
	var out backupOut
	decodeJSON(t, res, &out)
	if out.Summary["bytes_read"] != float64(n) || out.Summary["files_new"] != 1 {
		t.Errorf("summary %v, want %d bytes read, 1 new file", out.Summary, n)
	}
	dst := t.TempDir()
	mustRun(t, r.with("restore", "-output", dst, "latest")...)
	sameAsStream(t, filepath.Join(dst, "big.bin"), streamData(1, n))

	// dump streams the file back to stdout: its memory is bounded too.
	got := &streamComparer{want: streamData(1, n)}
	dump := runOpts{}.cmd(r.with("dump", "latest", "big.bin"))
	var stderr bytes.Buffer
	dump.Stdout, dump.Stderr = got, &stderr
	if err := dump.Run(); err != nil {
		t.Fatalf("dump: %v: %s", err, stderr.String())
	}
	rss = dump.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
	t.Logf("dump of %d MiB: peak RSS %d MiB", n>>20, rss>>10)
	if rss > 150<<10 {
		t.Errorf("dump: peak RSS %d MiB for a %d MiB file, want < 150 MiB", rss>>10, n>>20)
	}
	if err := got.end(); err != nil {
		t.Error("dump:", err)
	}
}

// streamComparer is an io.Writer that compares what is written with the
// stream want as it arrives, so a large output is checked without being
// kept.
type streamComparer struct {
	want io.Reader
	off  int64
	err  error
}

func (c *streamComparer) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	exp := make([]byte, len(p))
	n, _ := io.ReadFull(c.want, exp) // a short stream is caught by the comparison
	if n != len(p) || !bytes.Equal(p, exp) {
		c.err = fmt.Errorf("output differs from the stream in the %d bytes at offset %d", len(p), c.off)
		return 0, c.err
	}
	c.off += int64(n)
	return len(p), nil
}

// end reports a difference, or output shorter than the stream.
func (c *streamComparer) end() error {
	if c.err != nil {
		return c.err
	}
	if n, _ := io.Copy(io.Discard, c.want); n > 0 { // Discard never fails
		return fmt.Errorf("output ended at %d bytes, %d bytes short of the stream", c.off, n)
	}
	return nil
}

// sameAsStream compares the file at path with the stream want.
func sameAsStream(t *testing.T, path string, want io.Reader) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close() //nolint:errcheck // read only
	a, b := make([]byte, 1<<20), make([]byte, 1<<20)
	var off int64
	for {
		na, ea := io.ReadFull(f, a)
		nb, eb := io.ReadFull(want, b)
		if na != nb || !bytes.Equal(a[:na], b[:nb]) {
			t.Fatalf("%s differs from the stream in the MiB at offset %d (%d vs %d bytes)", path, off, na, nb)
		}
		if ea != nil || eb != nil {
			if (ea == nil) != (eb == nil) {
				t.Fatalf("%s: length differs from the stream's (%v, %v)", path, ea, eb)
			}
			return
		}
		off += int64(na)
	}
}

// TestBackupStdin covers -stdin and -stdin-from-command on a real
// repository: the parent by host and file name, restore, dump, ls and
// find of the snapshot, a failing command writing no snapshot, and the
// usage errors.
func TestBackupStdin(t *testing.T) {
	t.Parallel()
	r := newLocalRepo(t)
	data := func(seed uint64) []byte {
		b, err := io.ReadAll(streamData(seed, 3<<20+17))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	first, second := data(2), data(3)

	backup := func(in []byte, args ...string) backupOut {
		t.Helper()
		res, _ := runStdin(t, bytes.NewReader(in), r.with("backup", append([]string{"-json"}, args...)...)...)
		wantCode(t, res, 0)
		var out backupOut
		decodeJSON(t, res, &out)
		return out
	}
	a := backup(first, "-stdin", "-stdin-filename", "db.sql", "-host", "h1")
	if a.Parent != "" || a.Summary["files_new"] != 1 {
		t.Errorf("first stdin backup: %+v", a)
	}
	// Same host and name: the parent, unmodified; other name or host: none.
	b := backup(first, "-stdin", "-stdin-filename", "db.sql", "-host", "h1")
	if b.Parent != a.SnapshotID || b.Summary["files_unmodified"] != 1 || b.Summary["bytes_added"] != 0 {
		t.Errorf("same stream again: %+v, want parent %s, unmodified, nothing added", b, a.SnapshotID)
	}
	if c := backup(first, "-stdin", "-stdin-filename", "other.sql", "-host", "h1"); c.Parent != "" {
		t.Errorf("other file name has parent %s", c.Parent)
	}
	if c := backup(first, "-stdin", "-stdin-filename", "db.sql", "-host", "h2"); c.Parent != "" {
		t.Errorf("other host has parent %s", c.Parent)
	}
	res, _ := runStdin(t, bytes.NewReader(first), r.with("backup", "-stdin", "-stdin-filename", "db.sql", "-host", "h1", "-ignore-empty-snapshot")...)
	if res.code != 0 || !strings.Contains(res.stdout, "Nothing changed") {
		t.Errorf("-ignore-empty-snapshot on an unchanged stream: %v", res)
	}

	// -stdin-from-command: the command's output, flags after -- are its own.
	srcFile := filepath.Join(t.TempDir(), "dump")
	if err := os.WriteFile(srcFile, second, 0o600); err != nil {
		t.Fatal(err)
	}
	d := backup(nil, "-stdin-from-command", "-stdin-filename", "db.sql", "-host", "h1", "--", "sh", "-c", `cat "$1"`, "sh", srcFile)
	if d.Parent != b.SnapshotID || d.Summary["files_changed"] != 1 {
		t.Errorf("changed stream: %+v, want parent %s and a changed file", d, b.SnapshotID)
	}
	dst := t.TempDir()
	mustRun(t, r.with("restore", "-output", dst, d.SnapshotID)...)
	got, err := os.ReadFile(filepath.Join(dst, "db.sql"))
	if err != nil || !bytes.Equal(got, second) {
		t.Fatalf("restored db.sql: %d bytes (%v), want the command's %d bytes", len(got), err, len(second))
	}
	if entries, _ := os.ReadDir(dst); len(entries) != 1 {
		t.Errorf("restore wrote %d entries, want db.sql alone", len(entries))
	}
	if out := mustRun(t, r.with("dump", d.SnapshotID, "db.sql")...); out.stdout != string(second) {
		t.Errorf("dump db.sql: %d bytes, want %d", len(out.stdout), len(second))
	}
	if out := mustRun(t, r.with("ls", d.SnapshotID)...); !strings.Contains(out.stdout, "db.sql") {
		t.Errorf("ls: %v", out)
	}
	if out := mustRun(t, r.with("find", "db.sql")...); strings.Count(out.stdout, "db.sql") < 2 {
		t.Errorf("find db.sql: %v", out)
	}
}

// TestBackupStdinCommandFails: a command that fails, dies or cannot be
// started writes no snapshot, whatever it printed; the error names it and
// its exit status.
func TestBackupStdinCommandFails(t *testing.T) {
	t.Parallel()
	r := newLocalRepo(t)
	srcFile := filepath.Join(t.TempDir(), "dump")
	if err := os.WriteFile(srcFile, bytes.Repeat([]byte("dump "), 100_000), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		argv []string
		subs []string
	}{
		{"exit status", []string{"sh", "-c", `cat "$1"; exit 3`, "sh", srcFile}, []string{"sh -c", "exited with status 3"}},
		{"killed", []string{"sh", "-c", `head -c 100000 "$1"; kill -9 $$`, "sh", srcFile}, []string{"killed"}},
		{"not found", []string{"/nonexistent/pg_dump"}, []string{"/nonexistent/pg_dump"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, r.with("backup", append([]string{"-stdin-from-command", "--"}, tt.argv...)...)...)
			wantCode(t, res, 1)
			wantOneLineError(t, res, tt.subs...)
		})
	}
	if n := len(listJSON(t, r)); n != 0 {
		t.Errorf("%d snapshots after failed commands, want none", n)
	}
}

// TestBackupStdinUsage: combinations that cannot work are refused with a
// one-line usage error.
func TestBackupStdinUsage(t *testing.T) {
	t.Parallel()
	r := newLocalRepo(t)
	dst := t.TempDir()
	for _, tt := range []struct {
		name string
		args []string
		subs []string
	}{
		{"both", []string{"-stdin", "-stdin-from-command", "--", "true"}, []string{"-stdin", "-stdin-from-command"}},
		{"no command", []string{"-stdin-from-command"}, []string{"-stdin-from-command", "--"}},
		{"filename alone", []string{"-source", "local:" + dst, "-stdin-filename", "x"}, []string{"-stdin-filename"}},
		{"slash in name", []string{"-stdin", "-stdin-filename", "a/b"}, []string{"-stdin-filename", "a/b"}},
		{"dot name", []string{"-stdin", "-stdin-filename", ".."}, []string{"-stdin-filename"}},
		{"with source", []string{"-stdin", "-source", "local:" + dst}, []string{"-source", "-stdin"}},
		{"with exclude", []string{"-stdin", "-exclude", "*.log"}, []string{"-exclude", "-stdin"}},
		{"argument", []string{"-stdin", "extra"}, []string{"extra"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, r.with("backup", tt.args...)...)
			wantCode(t, res, 2)
			wantOneLineError(t, res, tt.subs...)
		})
	}
}

// TestBackupStdinFromCommandCancel: an interrupted backup kills the
// command it runs and writes no snapshot.
func TestBackupStdinFromCommandCancel(t *testing.T) {
	t.Parallel()
	r := newLocalRepo(t)
	// The command sends its pid through a FIFO (the test waits for it
	// without polling), then some output, then never ends.
	fifo := filepath.Join(t.TempDir(), "pid")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	script := `echo $$ > "$1"; head -c 1000000 /dev/zero; exec sleep 1000`
	c := runOpts{}.cmd(r.with("backup", "-stdin-from-command", "--", "sh", "-c", script, "sh", fifo))
	var stderr bytes.Buffer
	c.Stderr = &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- c.Wait() }()
	pids := make(chan string, 1)
	go func() {
		b, err := os.ReadFile(fifo) // blocks until the command writes
		if err != nil {
			b = nil
		}
		pids <- strings.TrimSpace(string(b))
	}()
	var pid string
	select {
	case pid = <-pids:
	case err := <-exited:
		t.Fatalf("backup ended (%v) before the command started: %s", err, stderr.String())
	}
	if err := c.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := <-exited; err == nil || !strings.Contains(stderr.String(), "interrupted") {
		t.Fatalf("interrupted backup: %v, stderr %q; want a failure that says interrupted", err, stderr.String())
	}
	// The child was killed and reaped: its pid is gone (or reused by an
	// unrelated process, which would not be our sleep).
	if cmdline, err := os.ReadFile("/proc/" + pid + "/cmdline"); err == nil && bytes.Contains(cmdline, []byte("sleep")) {
		t.Errorf("the command (pid %s, %q) still runs after the backup was interrupted", pid, cmdline)
	}
	if n := len(listJSON(t, r)); n != 0 {
		t.Errorf("%d snapshots after an interrupted backup, want 0", n)
	}
}
