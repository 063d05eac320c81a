package volume

import (
	"strings"

	"golang.org/x/sys/unix"
)

// mntDontBrowse is MNT_DONTBROWSE of <sys/mount.h>: a volume Finder does
// not show (the system's own: Preboot, VM, Update...).
const mntDontBrowse = 0x00100000

// removableMount: macOS marks removable media MNT_REMOVABLE.
func removableMount(flags uint64) bool { return flags&unix.MNT_REMOVABLE != 0 }

// hiddenMount: the system volumes under /System/Volumes, and any the
// Finder does not show, are not source roots ("/" reaches the data
// volume through its firmlinks).
func hiddenMount(flags uint64, point string) bool {
	return flags&mntDontBrowse != 0 || strings.HasPrefix(point, "/System/Volumes/")
}
