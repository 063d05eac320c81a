package exclude

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/cloudstic/cloudstic/internal/source/local"
)

// TestOneFileSystem mounts a tmpfs below the root (as root), or else uses
// /proc, a mount point below /: a directory on another device is kept
// empty, only with OneFileSystem.
func TestOneFileSystem(t *testing.T) {
	root, name := t.TempDir(), "mnt"
	mnt := filepath.Join(root, name)
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "none", mnt).CombinedOutput(); err == nil {
		t.Cleanup(func() {
			if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
				t.Errorf("umount %s: %v: %s", mnt, err, out)
			}
		})
	} else {
		t.Logf("no tmpfs (%v: %s): using /proc below /", err, out)
		root, name = "/", "proc"
	}
	fi, err := os.Lstat(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, one := range []bool{false, true} {
		f, err := NewFilter(Options{OneFileSystem: one}, local.New(), fi)
		if err != nil {
			t.Fatal(err)
		}
		want := Keep
		if one {
			want = KeepEmpty
		}
		if got := entry(t, f, root, name, name); got != want {
			t.Errorf("OneFileSystem=%v: Entry(%s) = %v, want %v", one, name, got, want)
		}
	}
}
