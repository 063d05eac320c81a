package sftp

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/cloudstic/cloudstic/internal/source"
	"github.com/cloudstic/cloudstic/internal/sshconn"
)

// testSource opens the test SFTP server (scripts/sftp-server.sh), whose
// login and data directory is SFTP_TEST_PATH, on this machine.
func testSource(t *testing.T) (*Source, string) {
	t.Helper()
	for _, v := range []string{"SFTP_TEST_HOST", "SFTP_TEST_PORT", "SFTP_TEST_USER", "SFTP_TEST_KEY", "SFTP_TEST_KNOWN_HOSTS", "SFTP_TEST_PATH"} {
		if os.Getenv(v) == "" {
			t.Fatalf(`%s not set: start the test SFTP server with eval "$(scripts/sftp-server.sh)" (as root)`, v)
		}
	}
	port, err := strconv.Atoi(os.Getenv("SFTP_TEST_PORT"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), sshconn.Config{User: os.Getenv("SFTP_TEST_USER"), Host: os.Getenv("SFTP_TEST_HOST"),
		Port: port, KeyFile: os.Getenv("SFTP_TEST_KEY"), KnownHostsFile: os.Getenv("SFTP_TEST_KNOWN_HOSTS")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = s.Close() // a test may have closed it already
	})
	return s, os.Getenv("SFTP_TEST_PATH")
}

// TestRoot: absolute paths, paths under the login directory and symlinks
// to directories resolve; a file or a missing path does not.
func TestRoot(t *testing.T) {
	s, home := testSource(t)
	dir, err := os.MkdirTemp(home, "root-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })  // best effort
	if err := os.Chmod(dir, 0o755); err != nil { // the server reads as its own user
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, dir+"-link"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(dir + "-link") }) // best effort
	tests := []struct {
		name, path, real string
		want             error
	}{
		{"absolute", dir, dir, nil},
		{"login directory", filepath.Base(dir), dir, nil},
		{"symlink", dir + "-link", dir, nil},
		{"file", filepath.Join(dir, "f"), "", source.ErrNotDir},
		{"missing", filepath.Join(dir, "none"), "", fs.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, err := s.Root(context.Background(), tt.path)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Root(%q) = %v, want %v", tt.path, err, tt.want)
			}
			if err == nil && (root.Real != tt.real || !root.Info.IsDir() || source.StatOf(root.Info) == nil) {
				t.Errorf("Root(%q) = %+v, want Real %s", tt.path, root, tt.real)
			}
		})
	}
}

// TestReadAndLost: entries come sorted with their modes, a file reads
// whole, and after the connection ends every call is source.ErrLost.
func TestReadAndLost(t *testing.T) {
	s, home := testSource(t)
	dir, err := os.MkdirTemp(home, "read-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })  // best effort
	if err := os.Chmod(dir, 0o755); err != nil { // the server reads as its own user
		t.Fatal(err)
	}
	for _, name := range []string{"b", "a", "c"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("data of "+name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	entries, err := s.ReadDir(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 3 || entries[0].Name() != "a" || entries[2].Name() != "c" {
		t.Fatalf("ReadDir = %v, want a, b, c", entries)
	}
	fi, err := entries[0].Info()
	if err != nil || source.StatOf(fi) == nil || source.StatOf(fi).Mode != 0o644 || fi.Size() != int64(len("data of a")) {
		t.Fatalf("Info of a = %v, %v", fi, err)
	}
	f, err := s.Open(ctx, filepath.Join(dir, "a"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(f)
	if err != nil || string(data) != "data of a" {
		t.Fatalf("read %q, %v", data, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.conn.SSH.Close(); err != nil {
		t.Fatal(err)
	}
	<-s.conn.Dead()
	if _, err := s.ReadDir(ctx, dir); !errors.Is(err, source.ErrLost) {
		t.Errorf("ReadDir after the connection ended = %v, want source.ErrLost", err)
	}
	if _, err := s.Lstat(ctx, dir); !errors.Is(err, source.ErrLost) {
		t.Errorf("Lstat after the connection ended = %v, want source.ErrLost", err)
	}
}
