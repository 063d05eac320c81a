package volume

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// Discover lists the local file systems of mountinfo (LocalMounts) whose
// mount points are directories (a bind-mounted file is no source root),
// with their UUIDs and labels from udev's /dev/disk/by-uuid and by-label
// links, and whether they are portable from sysfs.
func (s System) Discover(ctx context.Context) ([]Mount, error) {
	s = s.withDefaults()
	data, err := os.ReadFile(s.Mountinfo)
	if err != nil {
		return nil, fmt.Errorf("volume: %w", err)
	}
	entries, err := ParseMountinfo(string(data))
	if err != nil {
		return nil, fmt.Errorf("volume: %s: %w", s.Mountinfo, err)
	}
	uuids := links(filepath.Join(s.DiskByDir, "by-uuid"))
	labels := links(filepath.Join(s.DiskByDir, "by-label"))
	out := []Mount{}
	for _, e := range LocalMounts(entries) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if fi, err := os.Stat(e.Point); err != nil || !fi.IsDir() {
			continue
		}
		m := Mount{MountPoint: e.Point, Device: e.Source, FSType: e.FSType}
		// /sys/dev/block/MAJ:MIN links to the device's sysfs directory;
		// file systems without a block device have none.
		if link, err := filepath.EvalSymlinks(filepath.Join(s.Sys, "dev", "block", e.Dev)); err == nil {
			dev := filepath.Base(link)
			m.UUID, m.Label = uuids[dev], UnescapeUdev(labels[dev])
			m.Portable = s.portable(link)
		}
		out = append(out, m)
	}
	return out, nil
}

// links maps the device names udev's links in dir point to (sdb1) to the
// links' names (a UUID or a label).
func links(dir string) map[string]string {
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return out // no udev: no UUIDs or labels to show
	}
	for _, e := range entries {
		if target, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil {
			out[filepath.Base(target)] = e.Name()
		}
	}
	return out
}
