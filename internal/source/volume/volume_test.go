//go:build linux

package volume

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// fakeSystem builds a mountinfo and a /sys/dev/block for dir, mounted at
// mountPoint (an ancestor of dir) from the file system's root directory
// fsRoot, its device's sysfs directory being sysDev (relative to the fake
// /sys).
func fakeSystem(t *testing.T, dir, mountPoint, fsRoot, sysDev string, removable string) System {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		t.Fatal(err)
	}
	devNum := fmt.Sprintf("%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev))
	base := t.TempDir()
	mountinfo := filepath.Join(base, "mountinfo")
	lines := "21 26 0:20 / /proc rw,relatime - proc proc rw\n" +
		"26 1 " + devNum + " / / rw - ext4 /dev/vda rw\n" +
		"44 26 " + devNum + " " + fsRoot + " " + mountPoint + " rw,relatime - ext4 /dev/sdb1 rw\n"
	if err := os.WriteFile(mountinfo, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	sys := filepath.Join(base, "sys")
	devDir := filepath.Join(sys, sysDev)
	if err := os.MkdirAll(devDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if removable != "" {
		if err := os.WriteFile(filepath.Join(filepath.Dir(devDir), "removable"), []byte(removable+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(sys, "dev", "block"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(devDir, filepath.Join(sys, "dev", "block", devNum)); err != nil {
		t.Fatal(err)
	}
	return System{Mountinfo: mountinfo, Sys: sys, DiskByDir: filepath.Join(base, "disk"), Blkid: "/nonexistent/blkid"}
}

func TestLocate(t *testing.T) {
	top := t.TempDir()
	src := filepath.Join(top, "my photos", "2024")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	escaped := filepath.Join(top, `my\040photos`) // mountinfo's escape of a space
	for _, tt := range []struct {
		name, mountPoint, fsRoot, sysDev, removable string
		wantPath, wantDev                           string
		portable                                    bool
	}{
		{"usb partition", top, "/", "devices/pci0/usb2/2-1/host6/block/sdb/sdb1", "0", "/my photos/2024", "sdb1", true},
		{"removable disk", top, "/", "devices/pci0/ata1/block/sdc/sdc1", "1", "/my photos/2024", "sdc1", true},
		{"fixed disk", top, "/", "devices/pci0/ata1/block/sda/sda2", "0", "/my photos/2024", "sda2", false},
		{"loop device", top, "/", "devices/virtual/block/loop3", "0", "/my photos/2024", "loop3", true},
		{"mount point is the source", escaped, "/", "devices/pci0/usb1/block/sdb/sdb1", "", "/2024", "sdb1", true},
		{"bind mount of a subdirectory", top, "/data", "devices/pci0/usb1/block/sdb/sdb1", "", "/data/my photos/2024", "sdb1", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sys := fakeSystem(t, src, tt.mountPoint, tt.fsRoot, tt.sysDev, tt.removable)
			v, err := sys.Locate(src)
			if err != nil {
				t.Fatal(err)
			}
			if v.Path != tt.wantPath || v.Device != tt.wantDev || v.Portable != tt.portable {
				t.Errorf("Locate: %+v, want path %q device %q portable %v", v, tt.wantPath, tt.wantDev, tt.portable)
			}
		})
	}
}

func TestUUID(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	disk := filepath.Join(base, "disk")
	for _, l := range []struct{ dir, name, target string }{
		{"by-partuuid", "A1B2C3D4-0000-4000-8000-000000000001", "../../sdb1"},
		{"by-uuid", "0f0f-aaaa", "../../sdb1"},
		{"by-uuid", "1234-5678", "../../sdc1"},
	} {
		if err := os.MkdirAll(filepath.Join(disk, l.dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(l.target, filepath.Join(disk, l.dir, l.name)); err != nil {
			t.Fatal(err)
		}
	}
	blkid := filepath.Join(base, "blkid")
	script := "#!/bin/sh\ncase \"$4\" in\n" +
		"/dev/loop0) printf 'DEVNAME=/dev/loop0\\nUUID=956BED6D-2F80-40E0-95E2-F5E3E5BB6F4F\\nTYPE=ext4\\n';;\n" +
		"/dev/sdd1) printf 'UUID=aaaa\\nPART_ENTRY_UUID=bbbb-01\\n';;\n" +
		"/dev/loop1) printf 'TYPE=swap\\n';;\n" +
		"*) exit 2;;\nesac\n"
	if err := os.WriteFile(blkid, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	sys := System{DiskByDir: disk, Blkid: blkid}
	for _, tt := range []struct {
		dev, want string
		kind      Kind
		err       error
	}{
		{"sdb1", "a1b2c3d4-0000-4000-8000-000000000001", PartUUID, nil},
		{"sdc1", "1234-5678", FSUUID, nil},
		{"loop0", "956bed6d-2f80-40e0-95e2-f5e3e5bb6f4f", FSUUID, nil},
		{"sdd1", "bbbb-01", PartUUID, nil},
		{"loop1", "", "", ErrNoIdentity},
		{"sde1", "", "", ErrNoIdentity},
		{"", "", "", ErrNoIdentity},
	} {
		t.Run(tt.dev, func(t *testing.T) {
			u, k, err := sys.UUID(ctx, tt.dev)
			if u != tt.want || k != tt.kind || !errors.Is(err, tt.err) {
				t.Errorf("UUID(%q) = %q, %q, %v; want %q, %q, %v", tt.dev, u, k, err, tt.want, tt.kind, tt.err)
			}
		})
	}
}
