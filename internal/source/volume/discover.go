package volume

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Mount is one local file system a backup could start from: a source
// root with what is known of its volume.
type Mount struct {
	// MountPoint is where it is mounted ("C:\" on Windows).
	MountPoint string `json:"mount_point"`
	// Device is what is mounted there: /dev/sdb1, a ZFS dataset, or the
	// volume's GUID path on Windows.
	Device string `json:"device"`
	// FSType is the file system's type: ext4, apfs, NTFS...
	FSType string `json:"fs_type"`
	// UUID is the file system's UUID, "" when unknown.
	UUID string `json:"uuid"`
	// Label is the file system's label, "" when it has none or it is
	// unknown.
	Label string `json:"label"`
	// Portable: a drive a user carries between machines (removable, on
	// USB or MMC, or an image on a loop device).
	Portable bool `json:"portable"`
}

// Discoverer lists the local file systems of a machine. System is the
// running machine's; each platform implements it in its own file.
type Discoverer interface {
	Discover(ctx context.Context) ([]Mount, error)
}

var _ Discoverer = System{}

// ErrDiscoverUnsupported means this platform has no way here to list its
// file systems.
var ErrDiscoverUnsupported = fmt.Errorf("volume: listing file systems is not supported on this OS: %w", errors.ErrUnsupported)

// pseudoFS are the file system types that hold no user data: kernel
// interfaces, memory file systems, container layers and read-only
// package images. They are never source roots.
var pseudoFS = map[string]bool{
	"proc": true, "sysfs": true, "tmpfs": true, "devtmpfs": true, "devpts": true, "ramfs": true,
	"cgroup": true, "cgroup2": true, "securityfs": true, "pstore": true, "debugfs": true, "tracefs": true,
	"configfs": true, "fusectl": true, "mqueue": true, "hugetlbfs": true, "bpf": true, "autofs": true,
	"binfmt_misc": true, "efivarfs": true, "rpc_pipefs": true, "nsfs": true, "selinuxfs": true,
	"overlay": true, "squashfs": true, "nfsd": true, "devfs": true, "fdescfs": true, "linprocfs": true,
	"linsysfs": true, "procfs": true, "fuse.gvfsd-fuse": true, "fuse.portal": true, "fuse.lxcfs": true,
	"fuse.snapfuse": true,
}

// networkFS are remote file systems: not local source roots (back them up
// where they live).
var networkFS = map[string]bool{
	"nfs": true, "nfs4": true, "cifs": true, "smb3": true, "smbfs": true, "afpfs": true, "9p": true,
	"fuse.sshfs": true, "fuse.rclone": true, "ceph": true, "glusterfs": true, "webdav": true,
}

// Local says whether a file system of type fsType mounted at point is a
// local source root. The root file system always is, whatever its type
// (an overlay in a container).
func Local(point, fsType string) bool {
	if point == "/" {
		return true
	}
	return !pseudoFS[fsType] && !networkFS[fsType]
}

// MountinfoEntry is one line of /proc/self/mountinfo, escapes undone.
type MountinfoEntry struct {
	Dev    string // MAJ:MIN
	Root   string // the directory of the file system mounted here
	Point  string // mount point
	FSType string
	Source string // the mounted device, or what stands for it
}

// ErrMountinfo marks a line of mountinfo that cannot be read.
var ErrMountinfo = errors.New("malformed mountinfo line")

// ParseMountinfo reads the lines of /proc/PID/mountinfo (proc(5)):
//
//	id parent MAJ:MIN root mountpoint options [optional...] - type source super
//
// Blank lines are skipped; any other line that is not of that form is an
// error naming its number.
func ParseMountinfo(data string) ([]MountinfoEntry, error) {
	var out []MountinfoEntry
	for i, line := range strings.Split(data, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.Fields(line)
		sep := -1
		for j := 6; j < len(f); j++ {
			if f[j] == "-" {
				sep = j
				break
			}
		}
		if len(f) < 7 || sep < 0 || sep+2 >= len(f) || !strings.Contains(f[2], ":") {
			return nil, fmt.Errorf("%w %d: %q", ErrMountinfo, i+1, line)
		}
		out = append(out, MountinfoEntry{Dev: f[2], Root: unescape(f[3]), Point: unescape(f[4]),
			FSType: unescape(f[sep+1]), Source: unescape(f[sep+2])})
	}
	return out, nil
}

// LocalMounts keeps the entries that are local source roots (Local), one
// per mount point: a later mount over the same point hides the earlier.
func LocalMounts(entries []MountinfoEntry) []MountinfoEntry {
	last := map[string]int{}
	for i, e := range entries {
		last[e.Point] = i
	}
	var out []MountinfoEntry
	for i, e := range entries {
		if last[e.Point] == i && Local(e.Point, e.FSType) {
			out = append(out, e)
		}
	}
	return out
}

// UnescapeUdev undoes udev's \xHH escapes in /dev/disk/by-label names
// (a space is \x20).
func UnescapeUdev(s string) string {
	if !strings.Contains(s, `\x`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] == 'x' && isHex(s[i+2]) && isHex(s[i+3]) {
			b.WriteByte(hexVal(s[i+2])<<4 | hexVal(s[i+3]))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func hexVal(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// unescape undoes mountinfo's octal escapes of space, tab, newline and
// backslash.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1:i+4]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '7' {
			return false
		}
	}
	return len(s) == 3
}
