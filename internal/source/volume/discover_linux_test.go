package volume

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestDiscoverFixture: Discover on a fake machine (mountinfo, sysfs,
// udev links) lists its local mounts with UUID, label and portability;
// a mount point that is not a directory is skipped.
func TestDiscoverFixture(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	usb := filepath.Join(base, "usb stick")
	file := filepath.Join(base, "hosts")
	for _, d := range []string{root, usb} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	esc := func(s string) string { // mountinfo's escape of a space
		out := ""
		for _, r := range s {
			if r == ' ' {
				out += `\040`
			} else {
				out += string(r)
			}
		}
		return out
	}
	mi := "26 1 254:0 / " + root + " rw - ext4 /dev/vda rw\n" +
		"41 26 8:17 / " + esc(usb) + " rw - vfat /dev/sdb1 rw\n" +
		"42 26 254:0 /x/hosts " + file + " rw - ext4 /dev/vda rw\n" +
		"43 26 0:20 / /proc rw - proc proc rw\n"
	sys := System{Mountinfo: filepath.Join(base, "mountinfo"), Sys: filepath.Join(base, "sys"), DiskByDir: filepath.Join(base, "disk")}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(sys.Mountinfo, []byte(mi), 0o644))
	// sysfs: vda a virtual disk, sdb1 a partition of a USB disk.
	vda := filepath.Join(sys.Sys, "devices", "virtual", "block", "vda")
	sdb1 := filepath.Join(sys.Sys, "devices", "pci0", "usb2", "2-1", "block", "sdb", "sdb1")
	for _, d := range []string{vda, sdb1, filepath.Join(sys.Sys, "dev", "block"), filepath.Join(sys.DiskByDir, "by-uuid"), filepath.Join(sys.DiskByDir, "by-label")} {
		must(os.MkdirAll(d, 0o755))
	}
	must(os.Symlink(vda, filepath.Join(sys.Sys, "dev", "block", "254:0")))
	must(os.Symlink(sdb1, filepath.Join(sys.Sys, "dev", "block", "8:17")))
	must(os.Symlink("../../vda", filepath.Join(sys.DiskByDir, "by-uuid", "0b6f0c4e-1111-2222-3333-444455556666")))
	must(os.Symlink("../../sdb1", filepath.Join(sys.DiskByDir, "by-uuid", "ABCD-1234")))
	must(os.Symlink("../../sdb1", filepath.Join(sys.DiskByDir, "by-label", `My\x20Photos`)))

	got, err := sys.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []Mount{
		{MountPoint: root, Device: "/dev/vda", FSType: "ext4", UUID: "0b6f0c4e-1111-2222-3333-444455556666"},
		{MountPoint: usb, Device: "/dev/sdb1", FSType: "vfat", UUID: "ABCD-1234", Label: "My Photos", Portable: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Discover\n got %+v\nwant %+v", got, want)
	}
}

// TestDiscoverThisMachine: the running machine lists "/" with a type.
func TestDiscoverThisMachine(t *testing.T) {
	got, err := System{}.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range got {
		if m.MountPoint == "/" && m.FSType != "" {
			return
		}
	}
	t.Errorf("no / with a file system type in %+v", got)
}
