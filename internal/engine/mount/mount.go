//go:build !windows

package mount

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/repo"
)

// Serve mounts the snapshots of r at mountpoint and serves them until ctx
// ends (then it unmounts) or the file system is unmounted from outside
// (fusermount -u, umount). r's index need not be loaded.
func Serve(ctx context.Context, r *repo.Repository, mountpoint string, opts Options) error {
	if opts.DevFuse == "" {
		opts.DevFuse = DevFuse
	}
	if err := CheckDevice(opts.DevFuse); err != nil {
		return err
	}
	if fi, err := os.Stat(mountpoint); err != nil || !fi.IsDir() {
		return fmt.Errorf("%s: %w", mountpoint, ErrMountpoint)
	}
	m := newFS(r, opts)
	// Read the list before mounting, so a repository that cannot be read
	// fails here instead of as I/O errors in the mount.
	if _, err := m.snaps.get(ctx); err != nil {
		return err
	}
	long := time.Hour // snapshot contents never change
	server, err := fs.Mount(mountpoint, &rootDir{m: m}, &fs.Options{
		// Modes come from the snapshot, 0 included.
		EntryTimeout: &long, AttrTimeout: &long, NullPermissions: true,
		MountOptions: fuse.MountOptions{
			FsName: opts.FsName, Name: "cloudstic", AllowOther: opts.AllowOther,
			Options:     []string{"ro", "default_permissions"},
			DirectMount: os.Geteuid() == 0, MaxReadAhead: 1 << 20,
		},
	})
	if err != nil {
		return fmt.Errorf("mounting at %s: %w", mountpoint, err)
	}
	stopped := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			m.unmount(server, mountpoint)
		case <-stopped:
		}
	}()
	server.Wait()
	close(stopped)
	return ctx.Err()
}

// unmount detaches the file system, retrying while it is busy (a shell
// sitting in it): the kernel refuses until it is left, and a lazy detach
// is the last resort so that Ctrl-C always ends the command.
func (m *mountFS) unmount(server *fuse.Server, mountpoint string) {
	for range 20 {
		if err := server.Unmount(); err == nil {
			return
		}
		<-m.opts.Clock.After(250 * time.Millisecond)
	}
	m.opts.Warnf("%s is busy; detaching it lazily", mountpoint)
	if err := syscall.Unmount(mountpoint, lazyUnmount); err != nil {
		m.opts.Warnf("unmounting %s: %v (run fusermount -u %s)", mountpoint, err, mountpoint)
	}
}

// mountFS is the state shared by every node of one mount.
type mountFS struct {
	r     *repo.Repository
	opts  Options
	snaps *snapList
	blobs *blobCache
	trees *treeCache
}

func newFS(r *repo.Repository, opts Options) *mountFS {
	if opts.CacheBytes <= 0 {
		opts.CacheBytes = 64 << 20
	}
	if opts.Refresh <= 0 {
		opts.Refresh = 5 * time.Second
	}
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.Warnf == nil {
		opts.Warnf = func(string, ...any) {}
	}
	return &mountFS{r: r, opts: opts, blobs: newBlobCache(r, opts.CacheBytes), trees: newTreeCache(r, 4096),
		snaps: &snapList{r: r, clock: opts.Clock, every: opts.Refresh, warnf: opts.Warnf, indexed: map[string]bool{}}}
}

// inode derives a stable inode number from the parts naming an entry. The
// top bit stays clear: go-fuse numbers its own inodes from 2^63.
func inode(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	ino := h.Sum64() &^ (1 << 63)
	if ino < 2 {
		ino += 2
	}
	return ino
}

// errno maps an error of reading the repository to what a read returns,
// warning about it (the kernel passes on only the number).
func (m *mountFS) errno(what string, err error) syscall.Errno {
	if errors.Is(err, context.Canceled) {
		return syscall.EINTR
	}
	m.opts.Warnf("%s: %v", what, err)
	return syscall.EIO
}
