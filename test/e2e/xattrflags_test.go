//go:build unix

package e2e

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// xattrNames lists the extended attributes of path, sorted.
func xattrNames(t *testing.T, path string) []string {
	t.Helper()
	buf := make([]byte, 4096)
	n, err := unix.Llistxattr(path, buf)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range strings.Split(string(buf[:n]), "\x00") {
		if s != "" {
			names = append(names, s)
		}
	}
	slices.Sort(names)
	return names
}

// TestBackupXattrFlags: -skip-xattrs and -xattr-namespaces decide which
// extended attributes a backup records, as the restore shows.
func TestBackupXattrFlags(t *testing.T) {
	t.Parallel()
	src := filepath.Join(t.TempDir(), "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(src, "f")
	if err := os.WriteFile(file, []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	all := []string{"user.a", "user.b"}
	for _, name := range all {
		if err := unix.Lsetxattr(file, name, []byte("v"), 0); err != nil {
			if errors.Is(err, unix.ENOTSUP) {
				t.Skipf("no user xattrs on the temp file system: %v", err)
			}
			t.Fatal(err)
		}
	}
	if os.Geteuid() == 0 {
		if err := unix.Lsetxattr(file, "trusted.t", []byte("v"), 0); err != nil {
			t.Fatal(err)
		}
		all = append(all, "trusted.t")
	}
	slices.Sort(all)
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"default", nil, all},
		{"skip", []string{"-skip-xattrs"}, nil},
		{"namespaces", []string{"-xattr-namespaces", "user.a, trusted."}, slices.DeleteFunc(slices.Clone(all), func(s string) bool { return s == "user.b" })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newLocalRepo(t)
			out := backupJSON(t, r, src, tt.args...)
			dst := filepath.Join(t.TempDir(), "out")
			mustRun(t, r.with("restore", out.SnapshotID, "-output", dst)...)
			if got := xattrNames(t, filepath.Join(dst, "f")); !slices.Equal(got, tt.want) {
				t.Errorf("restored xattrs %q, want %q", got, tt.want)
			}
		})
	}
	r := newLocalRepo(t)
	for _, args := range [][]string{{"-skip-xattrs", "-xattr-namespaces", "user."}, {"-xattr-namespaces", "user.,"}} {
		res := run(t, r.with("backup", append([]string{"-source", "local:" + src}, args...)...)...)
		wantCode(t, res, 2)
		wantOneLineError(t, res, "-xattr-namespaces")
	}
}
