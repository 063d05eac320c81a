//go:build unix

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// snapshotVolume is the part of `cat snapshot` these tests read.
type snapshotVolume struct {
	Snapshot struct {
		Hostname string `json:"hostname"`
		Source   string `json:"source"`
		Parent   string `json:"parent"`
		Volume   *struct {
			UUID string `json:"uuid"`
			Path string `json:"path"`
		} `json:"volume"`
		Excludes *struct {
			Patterns []string `json:"patterns"`
		} `json:"excludes"`
		Tags []string `json:"tags"`
	} `json:"snapshot"`
}

func catSnapshot(t *testing.T, r repoArgs, id string) snapshotVolume {
	t.Helper()
	var s snapshotVolume
	decodeJSON(t, mustRun(t, r.with("cat", "snapshot", id)...), &s)
	return s
}

// sh runs a command and fails the test if it fails.
func sh(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

// mountImage mounts the ext4 image img on a loop device at a new
// directory, unmounted when the test ends.
func mountImage(t *testing.T, img string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "media")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sh(t, "mount", "-o", "loop", img, dir)
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v\n%s", dir, err, out)
		}
	})
	return dir
}

// driveImage makes an ext4 image holding photos/ (a few files, simple
// names), every entry's mtime and ctime set to 2020 with debugfs so that
// none is "racily clean" (changed less than 2 s before a backup) and an
// unchanged file is reliably not read again. It returns where the image
// is mounted and a copy of the image: the same drive on another machine.
func driveImage(t *testing.T) (mounted, copyImg string) {
	t.Helper()
	img := filepath.Join(t.TempDir(), "drive.img")
	sh(t, "mkfs.ext4", "-q", "-F", img, "32M")
	dir := mountImage(t, img)
	files := map[string]int{"photos/a.jpg": 200 << 10, "photos/b.jpg": 3 << 20, "photos/sub/c.jpg": 5000, "photos/sub/deeper/d.txt": 10}
	var cmds []string
	for rel, size := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, randomBytes(uint64(size), size), 0o644); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, "/"+rel)
	}
	cmds = append(cmds, "/photos", "/photos/sub", "/photos/sub/deeper")
	sh(t, "umount", dir)
	var script []byte
	for _, p := range cmds {
		for _, field := range []string{"mtime", "ctime"} {
			script = fmt.Appendf(script, "sif %s %s @1577836800\n", p, field)
		}
	}
	scriptFile := filepath.Join(t.TempDir(), "debugfs")
	if err := os.WriteFile(scriptFile, script, 0o600); err != nil {
		t.Fatal(err)
	}
	sh(t, "debugfs", "-w", "-f", scriptFile, img)
	copyImg = filepath.Join(t.TempDir(), "drive-copy.img")
	sh(t, "cp", img, copyImg)
	sh(t, "mount", "-o", "loop", img, dir) // mountImage's cleanup unmounts it
	return dir, copyImg
}

// TestPortableDriveKeepsParent: a drive (an ext4 image on a loop device,
// and a copy of it as the same drive on another machine) backed up from
// two hosts at two mount points keeps its incremental parent, and
// unchanged files are not read again though the device number differs.
// Needs root, mkfs.ext4, debugfs and mount (scripts/test.sh installs
// them).
func TestPortableDriveKeepsParent(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("loop mounts need root (CI runs as root)")
	}
	r := newLocalRepo(t)
	// The same drive on the other machine: a copy of its bytes, on
	// another loop device, at another mount point.
	first, copyImg := driveImage(t)
	second := mountImage(t, copyImg)

	a := backupJSON(t, r, filepath.Join(first, "photos"), "-host", "laptop")
	sa := catSnapshot(t, r, a.SnapshotID)
	if sa.Snapshot.Volume == nil || len(sa.Snapshot.Volume.UUID) != 36 || sa.Snapshot.Volume.Path != "/photos" {
		t.Fatalf("snapshot of a loop-mounted drive: volume %+v, want its UUID and /photos", sa.Snapshot.Volume)
	}
	b := backupJSON(t, r, filepath.Join(second, "photos"), "-host", "desktop")
	if b.Parent != a.SnapshotID {
		t.Fatalf("backup from the other host and mount point: parent %q, want %s", b.Parent, a.SnapshotID)
	}
	if b.Summary["bytes_read"] != 0 || b.Summary["files_unmodified"] != 4 || b.Summary["files_new"] != 0 || b.Summary["files_changed"] != 0 {
		t.Errorf("unchanged drive read again: %v", b.Summary)
	}
	if sb := catSnapshot(t, r, b.SnapshotID); sb.Snapshot.Volume == nil || sb.Snapshot.Volume.UUID != sa.Snapshot.Volume.UUID {
		t.Errorf("second snapshot's volume %+v, want %+v", sb.Snapshot.Volume, sa.Snapshot.Volume)
	}
	dst := t.TempDir()
	mustRun(t, r.with("restore", "-output", dst, b.SnapshotID)...)
	compareTrees(t, filepath.Join(second, "photos"), dst, cmpOpts{xattrs: true, owners: true})

	// Another directory of the drive is another group.
	if err := os.Mkdir(filepath.Join(second, "music"), 0o755); err != nil {
		t.Fatal(err)
	}
	if c := backupJSON(t, r, filepath.Join(second, "music"), "-host", "desktop"); c.Parent != "" {
		t.Errorf("other directory of the drive has parent %s", c.Parent)
	}
}

// TestVolumeUUIDFlag: -volume-uuid groups a source by the given UUID from
// any host; it is refused with a bad value.
func TestVolumeUUIDFlag(t *testing.T) {
	t.Parallel()
	r := newLocalRepo(t)
	src := smallTree(t, 11)
	a := backupJSON(t, r, src, "-host", "one", "-volume-uuid", "A1B2C3D4-0000-4000-8000-00000000000F")
	if s := catSnapshot(t, r, a.SnapshotID); s.Snapshot.Volume == nil || s.Snapshot.Volume.UUID != "a1b2c3d4-0000-4000-8000-00000000000f" {
		t.Fatalf("volume %+v, want the given UUID in lower case", s.Snapshot.Volume)
	}
	if b := backupJSON(t, r, src, "-host", "two", "-volume-uuid", "a1b2c3d4-0000-4000-8000-00000000000f"); b.Parent != a.SnapshotID {
		t.Errorf("same -volume-uuid from another host: parent %q, want %s", b.Parent, a.SnapshotID)
	}
	if c := backupJSON(t, r, src, "-host", "two", "-volume-uuid", "ffff"); c.Parent != "" {
		t.Errorf("another -volume-uuid has parent %s", c.Parent)
	}
	// Without the flag (a fixed disk): grouped by host and source as before.
	if d := backupJSON(t, r, src, "-host", "one"); d.Parent != "" {
		t.Errorf("no -volume-uuid on a fixed disk: parent %q, want none (the earlier ones are by volume)", d.Parent)
	}
	for _, bad := range [][]string{
		{"-source", "local:" + src, "-volume-uuid", " "},
		{"-source", "local:" + src, "-volume-uuid", "a b"},
		{"-source", "local:" + src, "-volume-uuid", "x\ty"},
		// Checked before any connection: the server need not exist.
		{"-source", "sftp://nobody@127.0.0.1:1/data", "-volume-uuid", "ffff"},
	} {
		res := run(t, r.with("backup", bad...)...)
		wantCode(t, res, 2)
		wantOneLineError(t, res, "-volume-uuid")
	}
}
