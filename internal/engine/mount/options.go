package mount

import (
	"errors"
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
)

// ErrNoFuse means the host offers no FUSE device.
var ErrNoFuse = errors.New("FUSE is not available on this host")

// ErrMountpoint means the mount point is not an existing directory.
var ErrMountpoint = errors.New("mount point is not a directory")

// Options configure a mount.
type Options struct {
	// CacheBytes bounds the memory of decoded file blobs (default 64 MiB).
	CacheBytes int64
	// Refresh is how long the snapshot list is reused before it is read
	// again (default 5 s).
	Refresh time.Duration
	// FsName is shown as the mount's source in /proc/mounts and df.
	FsName string
	// AllowOther lets other users see the mount (needs user_allow_other
	// in /etc/fuse.conf unless root); permissions are checked by the
	// kernel against the snapshot's modes and owners.
	AllowOther bool
	// DevFuse is the FUSE device to check for (default DevFuse).
	DevFuse string
	Clock   clock.Clock
	Warnf   func(format string, args ...any)
}
