package cli

import (
	"context"
	"os"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
)

func runMount(ctx context.Context, a *app, args []string) error {
	fs := a.flags()
	cacheSize := fs.String("cache-size", "64M", "memory for file contents read through the mount (K, M, G)")
	allowOther := fs.Bool("allow-other", false, "let other users use the mount (the kernel checks the snapshot's permissions; non-root needs user_allow_other in /etc/fuse.conf)")
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErr("give one mount point: mount DIRECTORY")
	}
	cacheBytes, err := parseByteSize(*cacheSize)
	if err != nil || cacheBytes < 1<<20 {
		return usageErr("-cache-size %q: give at least 1M (e.g. 64M, 1G)", *cacheSize)
	}
	mountpoint := pos[0]
	if err := operation.CheckFuse(); err != nil {
		return err
	}
	if fi, err := os.Stat(mountpoint); err != nil || !fi.IsDir() {
		return usageErr("mount point %s: not an existing directory (create it first)", mountpoint)
	}
	r, err := a.openRepo(ctx)
	if err != nil {
		return err
	}
	defer a.closeStore()
	return operation.Mount(ctx, r, operation.MountRequest{
		Mountpoint: mountpoint,
		Options:    operation.MountOptions{CacheBytes: cacheBytes, AllowOther: *allowOther, Warnf: a.warnf},
		Serving: func() {
			a.infof("Serving the snapshots of %s at %s (read-only); press Ctrl-C or run 'fusermount -u %s' to unmount",
				a.g.repo.URI, mountpoint, mountpoint)
		},
		Unmounted: func() { a.infof("Unmounted %s", mountpoint) },
	})
}
