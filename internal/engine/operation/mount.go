package operation

import (
	"context"
	"errors"

	"github.com/cloudstic/cloudstic/internal/engine/mount"
	"github.com/cloudstic/cloudstic/internal/repo"
)

// MountOptions configure Mount (mount.Options: the cache size, other
// users' access, the warnings' destination).
type MountOptions = mount.Options

// ErrNoFuse means the host offers no FUSE device (mount.ErrNoFuse).
var ErrNoFuse = mount.ErrNoFuse

// CheckFuse reports whether this host can mount: ErrNoFuse when its FUSE
// device (macFUSE on macOS) is missing, an error wrapping
// errors.ErrUnsupported on Windows. A front end checks it before it opens
// the repository.
func CheckFuse() error { return mount.CheckDevice(mount.DevFuse) }

// MountRequest says where Mount serves, and what it tells its caller.
type MountRequest struct {
	// Mountpoint is the existing directory to mount at.
	Mountpoint string
	// Options tune the mount; an empty FsName becomes "cloudstic:" and
	// the store's description.
	Options MountOptions
	// Serving, when set, is called once the lock is held, right before
	// the file system is mounted.
	Serving func()
	// Unmounted, when set, is called when the mount ended normally, still
	// under the lock.
	Unmounted func()
}

// Mount serves the snapshots of r, read-only, at req.Mountpoint
// (mount.Serve) holding a shared lock named "mount", so that no prune
// deletes what it reads, until ctx ends (Ctrl-C, which is how a mount
// normally ends: Mount then returns nil), the file system is unmounted
// from outside, or the lease is lost (the error wraps ErrLeaseLost). The
// lock is released afterwards.
func Mount(ctx context.Context, r *Repo, req MountRequest) error {
	opts := req.Options
	if opts.FsName == "" {
		opts.FsName = "cloudstic:" + r.Describe()
	}
	return withSharedLock(ctx, r, "mount", func(lockCtx context.Context, rr *repo.Repository) error {
		if req.Serving != nil {
			req.Serving()
		}
		err := mount.Serve(lockCtx, rr, req.Mountpoint, opts)
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			err = nil // ended by the caller, not by a lost lease
		}
		if err == nil && req.Unmounted != nil {
			req.Unmounted()
		}
		return err
	})
}
