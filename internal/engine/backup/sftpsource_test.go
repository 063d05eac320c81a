package backup_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/source"
	"github.com/cloudstic/cloudstic/internal/source/sftp"
	"github.com/cloudstic/cloudstic/internal/sshconn"
)

// sftpServer returns the login of the test SFTP server (scripts/sftp-server.sh)
// and a new directory below its data directory, which is on this machine.
func sftpServer(t *testing.T) (sshconn.Config, string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the tests make the SFTP server's tree through this host's file system, with Unix modes, owners and symbolic links")
	}
	for _, v := range []string{"SFTP_TEST_HOST", "SFTP_TEST_PORT", "SFTP_TEST_USER", "SFTP_TEST_KEY", "SFTP_TEST_KNOWN_HOSTS", "SFTP_TEST_PATH"} {
		if os.Getenv(v) == "" {
			t.Fatalf(`%s not set: start the test SFTP server with eval "$(scripts/sftp-server.sh)" (as root)`, v)
		}
	}
	port, err := strconv.Atoi(os.Getenv("SFTP_TEST_PORT"))
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(os.Getenv("SFTP_TEST_PATH"), "src-"+hex.EncodeToString(b))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Error(err)
		}
	})
	return sshconn.Config{User: os.Getenv("SFTP_TEST_USER"), Host: os.Getenv("SFTP_TEST_HOST"), Port: port,
		KeyFile: os.Getenv("SFTP_TEST_KEY"), KnownHostsFile: os.Getenv("SFTP_TEST_KNOWN_HOSTS")}, dir
}

// openSFTPSource opens the SFTP source of cfg, closed when the test ends.
func openSFTPSource(t *testing.T, cfg sshconn.Config) *sftp.Source {
	t.Helper()
	src, err := sftp.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = src.Close() // a test may have dropped the connection
	})
	return src
}

// countingSource counts the files a backup opens.
type countingSource struct {
	source.Source
	mu     sync.Mutex
	opened []string
}

func (s *countingSource) Open(ctx context.Context, path string) (source.File, error) {
	s.mu.Lock()
	s.opened = append(s.opened, path)
	s.mu.Unlock()
	return s.Source.Open(ctx, path)
}

// remoteTree writes files, a subdirectory, a symlink and modes into dir, all
// changed an hour ago.
func remoteTree(t *testing.T, dir string) {
	t.Helper()
	big := make([]byte, 3<<20)
	if _, err := rand.Read(big); err != nil {
		t.Fatal(err)
	}
	mkdir(t, filepath.Join(dir, "sub"))
	write(t, filepath.Join(dir, "a.txt"), "alpha")
	write(t, filepath.Join(dir, "sub", "b.txt"), "bravo")
	write(t, filepath.Join(dir, "sub", "big"), string(big))
	write(t, filepath.Join(dir, "skip.log"), "excluded")
	chmod(t, filepath.Join(dir, "a.txt"), 0o600)
	chmod(t, filepath.Join(dir, "sub", "b.txt"), 0o4755)
	if err := os.Symlink("sub/b.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	// The server reads as its unprivileged user.
	u, err := user.Lookup(os.Getenv("SFTP_TEST_USER"))
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(u.Uid) // numbers on Linux
	gid, _ := strconv.Atoi(u.Gid)
	for _, p := range []string{"a.txt", "sub/b.txt", "sub/big", "skip.log", "sub", "link", "."} {
		if err := os.Lchown(filepath.Join(dir, p), uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	chmod(t, filepath.Join(dir, "sub", "b.txt"), 0o4755) // chown cleared setuid
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	for _, p := range []string{"a.txt", "sub/b.txt", "sub/big", "skip.log", "sub", "."} {
		if err := os.Chtimes(filepath.Join(dir, p), old, old); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSFTPSourceBackup backs up a tree on the test SFTP server: a full
// backup restores byte for byte with modes, mtimes and the symlink, the
// exclude applies, and the incremental backup after one file changed opens
// that file only, with the first snapshot as its parent.
func TestSFTPSourceBackup(t *testing.T) {
	cfg, dir := sftpServer(t)
	remoteTree(t, dir)
	st := checktest.NewRepo(t, t.TempDir())
	ctx := context.Background()
	run := func(parent *backup.Result) (*backup.Result, []string) {
		t.Helper()
		r := checktest.Open(t, st)
		if _, err := r.LoadIndex(ctx); err != nil {
			t.Fatal(err)
		}
		var snaps []snapshot.WithID
		if parent != nil {
			snaps = []snapshot.WithID{{ID: parent.ID, Snapshot: parent.Snapshot}}
		}
		src := &countingSource{Source: openSFTPSource(t, cfg)}
		res, err := backup.Run(ctx, checktest.Writer(t, st, r), snapshot.Heads(snaps), backup.Options{Path: dir, Source: src, Hostname: "test",
			Workers: 2, Excludes: []string{"*.log"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Errors) > 0 {
			t.Fatalf("backup errors: %v", res.Errors)
		}
		return res, src.opened
	}
	full, opened := run(nil)
	if want := cfg.URL(dir); full.Snapshot.Source != want || full.Snapshot.Path != dir {
		t.Errorf("snapshot source %q path %q, want %q %q", full.Snapshot.Source, full.Snapshot.Path, want, dir)
	}
	if len(opened) != 3 {
		t.Errorf("full backup opened %v, want the 3 files not excluded", opened)
	}
	out := restoreSnapshot(t, st, full)
	sameTree(t, dir, out, []string{"a.txt", "sub", "sub/b.txt", "sub/big", "link"})
	if _, err := os.Lstat(filepath.Join(out, "skip.log")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("excluded skip.log restored (%v)", err)
	}

	write(t, filepath.Join(dir, "sub", "b.txt"), "bravo, changed")
	incr, opened := run(full)
	if incr.Parent == nil || incr.Parent.ID != full.ID {
		t.Fatalf("incremental parent %v, want %s", incr.Parent, full.ID.Short())
	}
	if want := filepath.Join(dir, "sub", "b.txt"); len(opened) != 1 || opened[0] != want {
		t.Errorf("incremental backup opened %v, want only %s", opened, want)
	}
	if s := incr.Snapshot.Summary; s.FilesChanged != 1 || s.FilesUnmodified != 2 {
		t.Errorf("incremental summary %+v, want 1 changed, 2 unmodified", s)
	}
	sameTree(t, dir, restoreSnapshot(t, st, incr), []string{"a.txt", "sub/b.txt", "sub/big", "link"})
}

// sameTree compares the entries rels of two trees: type, content, symlink
// target, permission bits and mtime (whole seconds, as SFTP has them).
func sameTree(t *testing.T, want, got string, rels []string) {
	t.Helper()
	for _, rel := range rels {
		w, g := filepath.Join(want, rel), filepath.Join(got, rel)
		wi, err := os.Lstat(w)
		if err != nil {
			t.Fatal(err)
		}
		gi, err := os.Lstat(g)
		if err != nil {
			t.Errorf("%s not restored: %v", rel, err)
			continue
		}
		if wi.Mode() != gi.Mode() || (!wi.IsDir() && !wi.ModTime().Truncate(time.Second).Equal(gi.ModTime())) {
			t.Errorf("%s: restored %v %v, want %v %v", rel, gi.Mode(), gi.ModTime(), wi.Mode(), wi.ModTime())
		}
		switch {
		case wi.Mode().IsRegular():
			wb, _ := os.ReadFile(w) // read above by Lstat's success; compared below
			gb, _ := os.ReadFile(g)
			if !bytes.Equal(wb, gb) {
				t.Errorf("%s: restored content differs (%d bytes, want %d)", rel, len(gb), len(wb))
			}
		case wi.Mode()&os.ModeSymlink != 0:
			wl, _ := os.Readlink(w)
			gl, _ := os.Readlink(g)
			if wl != gl {
				t.Errorf("%s: restored link to %q, want %q", rel, gl, wl)
			}
		}
	}
}

// droppingConn is a TCP connection that fails, as a dropped network would,
// once more than budget bytes have been read from it.
type droppingConn struct {
	net.Conn
	budget *atomic.Int64
}

func (c droppingConn) Read(b []byte) (int, error) {
	if c.budget.Add(-int64(len(b))) < 0 {
		_ = c.Close() // the failure is the point; Read reports it
		return 0, fmt.Errorf("test: connection dropped: %w", net.ErrClosed)
	}
	return c.Conn.Read(b)
}

// TestSFTPSourceDropped: the SSH connection dropping in the middle of a
// backup fails it with source.ErrLost, one line, and writes no snapshot.
func TestSFTPSourceDropped(t *testing.T) {
	cfg, dir := sftpServer(t)
	remoteTree(t, dir)
	var budget atomic.Int64
	budget.Store(1 << 20) // the tree holds 3 MiB
	cfg.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return droppingConn{Conn: c, budget: &budget}, nil
	}
	st := checktest.NewRepo(t, t.TempDir())
	ctx := context.Background()
	r := checktest.Open(t, st)
	if _, err := r.LoadIndex(ctx); err != nil {
		t.Fatal(err)
	}
	_, err := backup.Run(ctx, checktest.Writer(t, st, r), nil, backup.Options{Path: dir, Source: openSFTPSource(t, cfg), Hostname: "test", Workers: 2})
	if !errors.Is(err, source.ErrLost) {
		t.Fatalf("backup.Run = %v, want source.ErrLost", err)
	}
	if bytes.ContainsRune([]byte(err.Error()), '\n') {
		t.Errorf("error is not one line: %q", err)
	}
	snaps, _, err := r.Snapshots(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(snaps) != 0 {
		t.Errorf("%d snapshots written after the connection dropped", len(snaps))
	}
}
