//go:build linux

package volume

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// loopMount makes an ext4 image of 16 MiB (or copies from when set),
// mounts it on a loop device at a new directory and returns the image and
// the mount point; the mount goes when the test ends. It needs root,
// mkfs.ext4 (e2fsprogs) and mount (util-linux), which scripts/test.sh
// installs.
func loopMount(t *testing.T, from string) (img, dir string) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("loop mounts need root (CI runs as root)")
	}
	base := t.TempDir()
	img = filepath.Join(base, "drive.img")
	if from == "" {
		if out, err := exec.Command("mkfs.ext4", "-q", "-F", img, "16M").CombinedOutput(); err != nil {
			t.Fatalf("mkfs.ext4: %v\n%s", err, out)
		}
	} else if out, err := exec.Command("cp", from, img).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	dir = filepath.Join(base, "mnt")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-o", "loop", img, dir).CombinedOutput(); err != nil {
		t.Fatalf("mount -o loop %s: %v\n%s", img, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v\n%s", dir, err, out)
		}
	})
	return img, dir
}

// TestLoopMountedDrive: the same file system (an image and its copy, as a
// drive plugged into two machines) mounted at two places has one
// identity, found without udev's /dev/disk links.
func TestLoopMountedDrive(t *testing.T) {
	ctx := context.Background()
	img, a := loopMount(t, "")
	if err := os.MkdirAll(filepath.Join(a, "photos", "2024"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("sync").CombinedOutput(); err != nil {
		t.Fatalf("sync: %v\n%s", err, out)
	}
	_, b := loopMount(t, img)
	sys := System{DiskByDir: filepath.Join(t.TempDir(), "no-udev")}
	var ids [2]string
	var devs [2]string
	for i, root := range []string{a, b} {
		v, err := sys.Locate(filepath.Join(root, "photos", "2024"))
		if err != nil {
			t.Fatal(err)
		}
		if v.MountPoint != root || v.Path != "/photos/2024" || !v.Portable {
			t.Fatalf("Locate under %s: %+v, want mount point %s, path /photos/2024, portable", root, v, root)
		}
		u, kind, err := sys.UUID(ctx, v.Device)
		if err != nil || kind != FSUUID || len(u) != 36 {
			t.Fatalf("UUID(%s): %q %q %v, want a file system UUID", v.Device, u, kind, err)
		}
		ids[i], devs[i] = u, v.Device
	}
	if ids[0] != ids[1] || devs[0] == devs[1] {
		t.Errorf("UUIDs %q (on %s) and %q (on %s): want one UUID on two devices", ids[0], devs[0], ids[1], devs[1])
	}
}
