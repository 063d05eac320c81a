//go:build unix

package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// mountProc is a running `cloudstic mount`.
type mountProc struct {
	t      *testing.T
	dir    string
	cmd    *exec.Cmd
	exited chan error
	stderr string // the file the process's stderr goes to
}

// log is what the process wrote to stderr so far. Its stderr is a file,
// not a pipe drained by a goroutine, so a line written before the process
// answered a file system request is here once that request returns.
func (m *mountProc) log() string {
	b, err := os.ReadFile(m.stderr)
	if err != nil {
		m.t.Fatalf("reading the mount's stderr: %v", err)
	}
	return string(b)
}

// startMount runs cloudstic mount on a new directory and waits until the
// file system is there. The test fails if the mount is still up at its end.
func startMount(t *testing.T, r repoArgs, extra ...string) *mountProc {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Fatalf("the mount tests need /dev/fuse (scripts/test.sh creates it): %v", err)
	}
	m := &mountProc{t: t, dir: t.TempDir(), exited: make(chan error, 1)}
	m.stderr = filepath.Join(t.TempDir(), "stderr")
	stderr, err := os.Create(m.stderr)
	if err != nil {
		t.Fatal(err)
	}
	m.cmd = runOpts{}.cmd(r.with("mount", append([]string{m.dir}, extra...)...))
	m.cmd.Stderr = stderr
	startErr := m.cmd.Start()
	// The child has its own copy of the descriptor; ours is no longer needed.
	if err := stderr.Close(); err != nil {
		t.Fatal(err)
	}
	if startErr != nil {
		t.Fatal(startErr)
	}
	go func() { m.exited <- m.cmd.Wait() }()
	t.Cleanup(func() {
		if isMounted(m.dir) {
			_ = m.cmd.Process.Signal(os.Interrupt) // best effort; the error below says what matters
			err := <-m.exited
			t.Errorf("%s was still mounted at the end of the test (the mount process ended: %v)", m.dir, err)
		}
	})
	m.waitFor("the mount", func() bool { return isMounted(m.dir) })
	return m
}

// waitFor polls cond until it holds, failing the test if the mount process
// exits first or a minute passes (a bound on hangs, not a timing check).
func (m *mountProc) waitFor(what string, cond func() bool) {
	m.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		select {
		case err := <-m.exited:
			m.t.Fatalf("mount exited (%v) while waiting for %s: %s", err, what, m.log())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("no %s after a minute: %s", what, m.log())
		}
	}
}

// stop ends the mount with sig (or fusermount -u when sig is nil) and
// checks it exits 0 and unmounted.
func (m *mountProc) stop(sig os.Signal) {
	m.t.Helper()
	if sig == nil {
		if out, err := exec.Command("fusermount3", "-u", m.dir).CombinedOutput(); err != nil {
			m.t.Fatalf("fusermount3 -u: %v: %s", err, out)
		}
	} else if err := m.cmd.Process.Signal(sig); err != nil {
		m.t.Fatal(err)
	}
	select {
	case err := <-m.exited:
		if err != nil {
			m.t.Errorf("mount exited with %v: %s", err, m.log())
		}
	case <-time.After(time.Minute):
		m.t.Fatalf("mount did not exit: %s", m.log())
	}
	if isMounted(m.dir) {
		m.t.Errorf("%s still mounted", m.dir)
	}
	if !strings.Contains(m.log(), "Unmounted") {
		m.t.Errorf("no goodbye on stderr: %s", m.log())
	}
}

// isMounted reports whether dir is a mount point (its device differs from
// its parent's).
func isMounted(dir string) bool {
	var st, parent unix.Stat_t
	if unix.Stat(dir, &st) != nil || unix.Stat(filepath.Dir(dir), &parent) != nil {
		return false
	}
	return st.Dev != parent.Dev
}

// wantNoLocks fails unless the repository holds no lock.
func wantNoLocks(t *testing.T, r repoArgs) {
	t.Helper()
	var locks []any
	res := mustRun(t, r.with("locks", "-json")...)
	if err := json.Unmarshal([]byte(res.stdout), &locks); err != nil || len(locks) != 0 {
		t.Errorf("locks after the mount ended: %v %s", err, res.stdout)
	}
}

// TestMount mounts a snapshot of the full test tree and compares it with
// the source (types, contents, modes, ns mtimes, symlinks, hard links,
// owners, xattrs), runs diff -r, backs up while mounted and sees the new
// snapshot appear, then unmounts with Ctrl-C.
func TestMount(t *testing.T) {
	t.Parallel()
	r := newLocalRepo(t)
	src := filepath.Join(t.TempDir(), "src")
	info := makeTree(t, src, treeOpts{big: true, seed: 21})
	first := backupJSON(t, r, src, "-tag", "nightly").SnapshotID
	m := startMount(t, r)

	latest := filepath.Join(m.dir, "snapshots", "latest")
	compareTrees(t, src, latest+"/", cmpOpts(info))
	// diff -r reads every file through the mount; fifos it cannot compare.
	if out, err := exec.Command("diff", "-r", "--no-dereference", "-x", "fifo", src, latest+"/").CombinedOutput(); err != nil {
		t.Errorf("diff -r: %v\n%s", err, out)
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"latest/one", "ids/" + first[:8] + "/one", "hosts/" + host + "/latest/one", "tags/nightly/latest/one"} {
		if _, err := os.Stat(filepath.Join(m.dir, p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	if err := os.WriteFile(filepath.Join(latest, "one"), []byte("x"), 0o644); !errors.Is(err, syscall.EROFS) {
		t.Errorf("writing into the mount: %v, want EROFS", err)
	}

	if err := os.WriteFile(filepath.Join(src, "after-mount"), []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	second := backupJSON(t, r, src).SnapshotID // shared locks: runs beside the mount
	m.waitFor("the new snapshot", func() bool {
		_, err := os.Stat(filepath.Join(m.dir, "ids", second[:8], "after-mount"))
		return err == nil
	})
	// The kernel may keep the old latest link for up to a second more.
	m.waitFor("latest to move", func() bool {
		target, err := os.Readlink(filepath.Join(m.dir, "latest"))
		return err == nil && target == mustReadlink(t, filepath.Join(m.dir, "ids", second[:8]))[len("../"):]
	})
	got, err := os.ReadFile(filepath.Join(m.dir, "latest", "after-mount"))
	if err != nil || string(got) != "new\n" {
		t.Errorf("latest/after-mount: %q, %v", got, err)
	}
	m.stop(os.Interrupt)
	wantNoLocks(t, r)
}

// TestMountUnmountFromOutside ends a mount with fusermount -u.
func TestMountUnmountFromOutside(t *testing.T) {
	t.Parallel()
	r := newLocalRepo(t)
	backupJSON(t, r, smallTree(t, 22))
	m := startMount(t, r)
	if _, err := os.ReadFile(filepath.Join(m.dir, "latest", "a", "b", "c", "d", "deep.txt")); err != nil {
		t.Fatal(err)
	}
	m.stop(nil)
	wantNoLocks(t, r)
}

// TestMountS3 browses a repository on the S3 server.
func TestMountS3(t *testing.T) {
	t.Parallel()
	r := newRepo(t, storeKind{"s3", s3Store})
	src := smallTree(t, 23)
	backupJSON(t, r, src)
	m := startMount(t, r)
	compareTrees(t, src, filepath.Join(m.dir, "latest")+"/", cmpOpts{})
	m.stop(syscall.SIGTERM)
	wantNoLocks(t, r)
}

// TestMountCatTouchesOnlyItsPack backs up 10,000 files spread over several
// data packs, mounts the snapshot with -debug (which logs every store
// request) and checks that cat of one file reads one data pack.
func TestMountCatTouchesOnlyItsPack(t *testing.T) {
	t.Parallel()
	r := newLocalRepo(t)
	src := filepath.Join(t.TempDir(), "src")
	for i := range 10000 {
		dir := filepath.Join(src, "d"+strconv.Itoa(i%100))
		if i < 100 {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "f"+strconv.Itoa(i)), randomBytes(uint64(i), 8<<10), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	backupJSON(t, r, src)
	packs := 0
	err := filepath.WalkDir(filepath.Join(r[1][len("local:"):], "data"), func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			packs++
		}
		return err
	})
	if err != nil || packs < 4 {
		t.Fatalf("%d packs (%v): the test needs several data packs", packs, err)
	}
	m := startMount(t, r, "-debug")
	file := filepath.Join(m.dir, "latest", "d42", "f4242")
	if _, err := os.Stat(file); err != nil { // the lookups read trees
		t.Fatal(err)
	}
	before := len(m.log())
	got, err := exec.Command("cat", file).Output()
	if err != nil || !bytes.Equal(got, randomBytes(4242, 8<<10)) {
		t.Fatalf("cat: %v, %d bytes", err, len(got))
	}
	read := map[string]bool{}
	for _, line := range strings.Split(m.log()[before:], "\n") {
		if f := strings.Fields(line); len(f) > 3 && strings.HasPrefix(f[3], "data/") && (f[2] == "GET" || f[2] == "GETRANGE") {
			read[f[3]] = true
		}
	}
	if len(read) != 1 {
		t.Errorf("cat of one 8 KiB file read %d packs, want 1 (of %d); store requests:\n%s", len(read), packs, m.log()[before:])
	}
	m.stop(os.Interrupt)
}

// TestMountErrors covers the refusals: no FUSE device, a bad mount point.
func TestMountErrors(t *testing.T) {
	t.Parallel()
	r := newLocalRepo(t)
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res := run(t, r.with("mount", notDir)...)
	wantCode(t, res, 2)
	wantOneLineError(t, res, notDir, "not an existing directory")
	wantOneLineError(t, run(t, r.with("mount")...), "mount point")

	// A host without /dev/fuse: a private mount namespace with an empty
	// /dev.
	dir := t.TempDir()
	c := exec.Command("unshare", "--mount", "sh", "-c", `mount -t tmpfs none /dev && exec "$@"`, "sh", binary)
	c.Args = append(c.Args, r.with("mount", dir)...)
	c.Env = baseEnv()
	var stderr bytes.Buffer
	c.Stderr = &stderr
	err := c.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("mount without /dev/fuse: %v, want exit 1: %s", err, stderr.String())
	}
	msg := strings.TrimSpace(withoutPasswordWarning(stderr.String()))
	if strings.Contains(msg, "\n") || !strings.Contains(msg, "FUSE is not available") || !strings.Contains(msg, "/dev/fuse") {
		t.Errorf("want one line naming the missing /dev/fuse, got %q", msg)
	}
}

func mustReadlink(t *testing.T, p string) string {
	t.Helper()
	target, err := os.Readlink(p)
	if err != nil {
		t.Fatal(err)
	}
	return target
}
