package volume

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

func (s System) withDefaults() System {
	if s.Mountinfo == "" {
		s.Mountinfo = "/proc/self/mountinfo"
	}
	if s.Sys == "" {
		s.Sys = "/sys"
	}
	if s.DiskByDir == "" {
		s.DiskByDir = "/dev/disk"
	}
	if s.Blkid == "" {
		s.Blkid = "blkid"
	}
	return s
}

// Locate finds the volume holding path, which must be absolute and free
// of symlinks (filepath.EvalSymlinks). A path on no block device (tmpfs,
// a network file system) has a Volume with no Device.
func (s System) Locate(path string) (Volume, error) {
	s = s.withDefaults()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return Volume{}, fmt.Errorf("volume: %s: %w", path, err)
	}
	devNum := fmt.Sprintf("%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev))
	m, err := s.mountOf(path, devNum)
	if err != nil {
		return Volume{}, err
	}
	rel, err := filepath.Rel(m.point, path)
	if err != nil {
		return Volume{}, fmt.Errorf("volume: %s below %s: %w", path, m.point, err)
	}
	v := Volume{MountPoint: m.point, Path: filepath.Join(m.root, rel)}
	// /sys/dev/block/MAJ:MIN links to the device's directory, e.g.
	// .../usb2/2-1/.../block/sdb/sdb1; file systems without a block
	// device (tmpfs, overlay, nfs) have anonymous numbers not there.
	link, err := filepath.EvalSymlinks(filepath.Join(s.Sys, "dev", "block", m.dev))
	if err != nil {
		return v, nil
	}
	v.Device = filepath.Base(link)
	v.Portable = s.portable(link)
	return v, nil
}

// portable says whether the device at sysfs directory dev is one a user
// carries between machines.
func (s System) portable(dev string) bool {
	if strings.HasPrefix(filepath.Base(dev), "loop") || strings.Contains(dev, "/usb") || strings.Contains(dev, "/mmc") {
		return true
	}
	// A partition's removable flag is its disk's.
	for _, d := range []string{dev, filepath.Dir(dev)} {
		if b, err := os.ReadFile(filepath.Join(d, "removable")); err == nil {
			return strings.TrimSpace(string(b)) == "1"
		}
	}
	return false
}

// mount is one line of mountinfo.
type mount struct {
	point string // mount point
	root  string // the directory of the file system mounted there
	dev   string // MAJ:MIN of its device
}

// mountOf finds the mount of device devNum ("MAJ:MIN") that holds path:
// the one with the longest mount point above path.
func (s System) mountOf(path, devNum string) (mount, error) {
	data, err := os.ReadFile(s.Mountinfo)
	if err != nil {
		return mount{}, fmt.Errorf("volume: %w", err)
	}
	// The device's own mount first; else (btrfs subvolumes report other
	// device numbers than their mount's) the deepest mount above path.
	for _, sameDev := range []bool{true, false} {
		var best mount
		found := false
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			// id parent MAJ:MIN root mountpoint options [optional...] - type source super
			f := strings.Fields(sc.Text())
			if len(f) < 5 || (sameDev && f[2] != devNum) {
				continue
			}
			point := unescape(f[4])
			if !within(path, point) || (found && len(point) <= len(best.point)) {
				continue
			}
			best, found = mount{point: point, root: unescape(f[3]), dev: f[2]}, true
		}
		if found {
			return best, nil
		}
	}
	return mount{}, fmt.Errorf("volume: no mount holds %s in %s", path, s.Mountinfo)
}

// within says whether path is dir or below it.
func within(path, dir string) bool {
	return dir == "/" || path == dir || strings.HasPrefix(path, dir+"/")
}

// UUID returns the identity of the block device dev (a name under /dev):
// its GPT partition UUID, else its file system UUID, lower case. It looks
// in udev's /dev/disk links first, then asks blkid to probe the device.
func (s System) UUID(ctx context.Context, dev string) (string, Kind, error) {
	s = s.withDefaults()
	if dev == "" {
		return "", "", fmt.Errorf("%w: not on a block device", ErrNoIdentity)
	}
	for _, k := range []Kind{PartUUID, FSUUID} {
		if u := s.linkTo(filepath.Join(s.DiskByDir, "by-"+string(k)), dev); u != "" {
			return strings.ToLower(u), k, nil
		}
	}
	return s.probe(ctx, dev)
}

// linkTo returns the name of the link in dir that points to /dev/dev.
func (s System) linkTo(dir, dev string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	for _, e := range entries {
		target, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err == nil && filepath.Base(target) == dev {
			return e.Name()
		}
	}
	return ""
}

// probe asks blkid for the device's UUIDs. blkid -p reads the device
// itself (no cache, no udev); it needs read access to it.
func (s System) probe(ctx context.Context, dev string) (string, Kind, error) {
	cmd := exec.CommandContext(ctx, s.Blkid, "-p", "-o", "export", "/dev/"+dev)
	// blkid needs no environment, and must not inherit ours (a password
	// in CLOUDSTIC_PASSWORD).
	cmd.Env = []string{}
	out, err := cmd.Output()
	if err != nil {
		return "", "", fmt.Errorf("%w: blkid -p /dev/%s: %w", ErrNoIdentity, dev, err)
	}
	vals := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			vals[k] = v
		}
	}
	if u := vals["PART_ENTRY_UUID"]; u != "" {
		return strings.ToLower(u), PartUUID, nil
	}
	if u := vals["UUID"]; u != "" {
		return strings.ToLower(u), FSUUID, nil
	}
	return "", "", fmt.Errorf("%w: blkid found no UUID on /dev/%s", ErrNoIdentity, dev)
}
