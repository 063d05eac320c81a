//go:build unix

package e2e

import (
	"bytes"
	"crypto/rand"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// sftpSourceTree writes a tree into a new directory of the test SFTP
// server's data directory (on this machine), owned by the server's user,
// with every entry changed an hour ago. It returns the directory and the
// source flags that log in to it.
func sftpSourceTree(t *testing.T) (dir string, login []string) {
	t.Helper()
	base, loginDir, _ := sftpBase(t)
	dir = filepath.Join(loginDir, randName(t, "src-"))
	big := make([]byte, 1<<20)
	if _, err := rand.Read(big); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"a.txt": []byte("alpha"), "sub/b.txt": []byte("bravo"), "sub/big": big, "x.log": []byte("log")}
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("sub/b.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Error(err)
		}
	})
	u, err := user.Lookup(os.Getenv("SFTP_TEST_USER"))
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(u.Uid) // numeric on Linux
	gid, _ := strconv.Atoi(u.Gid)
	old := time.Now().Add(-time.Hour)
	for _, name := range []string{"a.txt", "sub/b.txt", "sub/big", "x.log", "link", "sub", "."} {
		p := filepath.Join(dir, name)
		if err := os.Lchown(p, uid, gid); err != nil {
			t.Fatal(err)
		}
		if name != "link" {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir, []string{"-source", base + dir, "-source-sftp-key", os.Getenv("SFTP_TEST_KEY"),
		"-source-sftp-known-hosts", os.Getenv("SFTP_TEST_KNOWN_HOSTS")}
}

// TestBackupSFTPSource backs up a tree on the test SFTP server with
// -source sftp://..., restores it byte for byte, and backs it up again
// after one file changed: the second run reads that file only and has the
// first snapshot as its parent. Excludes apply.
func TestBackupSFTPSource(t *testing.T) {
	dir, login := sftpSourceTree(t)
	r := newLocalRepo(t)
	backup := func() backupOut {
		t.Helper()
		res := mustRun(t, r.with("backup", append([]string{"-json", "-exclude", "*.log"}, login...)...)...)
		var out backupOut
		decodeJSON(t, res, &out)
		if out.Errors != 0 || len(out.SnapshotID) != 64 {
			t.Fatalf("backup: %d errors, snapshot %q\n%v", out.Errors, out.SnapshotID, res)
		}
		return out
	}
	full := backup()
	out := filepath.Join(t.TempDir(), "out")
	mustRun(t, r.with("restore", full.SnapshotID, "-output", out)...)
	for _, name := range []string{"a.txt", "sub/b.txt", "sub/big"} {
		want, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s restored as %d bytes (%v), want %d", name, len(got), err, len(want))
		}
		if fi, err := os.Stat(filepath.Join(out, name)); err != nil || fi.Mode().Perm() != 0o640 {
			t.Errorf("%s restored with mode %v (%v), want 0640", name, fi.Mode(), err)
		}
	}
	if target, err := os.Readlink(filepath.Join(out, "link")); err != nil || target != "sub/b.txt" {
		t.Errorf("link restored as %q (%v), want sub/b.txt", target, err)
	}
	if _, err := os.Lstat(filepath.Join(out, "x.log")); err == nil {
		t.Errorf("excluded x.log was backed up")
	}

	if err := os.WriteFile(filepath.Join(dir, "sub", "b.txt"), []byte("bravo, changed"), 0o640); err != nil {
		t.Fatal(err)
	}
	incr := backup()
	if incr.Parent != full.SnapshotID {
		t.Errorf("parent %q, want %q", incr.Parent, full.SnapshotID)
	}
	s := incr.Summary
	if s["files_changed"] != 1 || s["files_unmodified"] != 2 || s["bytes_read"] != float64(len("bravo, changed")) {
		t.Errorf("incremental backup summary %v: want 1 changed file read (14 bytes), 2 unmodified", s)
	}
}

// TestBackupSFTPSourceErrors: a missing remote directory and rejected
// credentials fail the backup with one line each, and write nothing.
func TestBackupSFTPSourceErrors(t *testing.T) {
	dir, login := sftpSourceTree(t)
	base, _, _ := sftpBase(t)
	r := newLocalRepo(t)
	wrongKey := filepath.Join(t.TempDir(), "none")
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"missing directory", append([]string{"-source", base + dir + "-missing"}, login[2:]...), []string{"cannot back up", "-missing"}},
		{"no such key", append(append([]string{}, login...), "-source-sftp-key", wrongKey), []string{"SSH key", wrongKey}},
		{"bad URL", []string{"-source", "sftp://host:0/x"}, []string{"-source", "invalid sftp URL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, r.with("backup", tt.args...)...)
			if res.code == 0 {
				t.Fatalf("want a failure, got %v", res)
			}
			wantOneLineError(t, res, tt.want...)
		})
	}
	if got := listJSON(t, r); len(got) != 0 {
		t.Errorf("%d snapshots written by failed backups", len(got))
	}
}
