//go:build darwin || freebsd

package volume

import (
	"context"
	"fmt"

	"golang.org/x/sys/unix"
)

// Discover lists the local file systems getfsstat(2) reports: MNT_LOCAL
// ones of a type that holds data (Local), "/" always. UUIDs and labels are
// not read here (macOS keeps them in DiskArbitration), so they are empty.
func (s System) Discover(ctx context.Context) ([]Mount, error) {
	n, err := unix.Getfsstat(nil, unix.MNT_NOWAIT)
	if err != nil {
		return nil, fmt.Errorf("volume: getfsstat: %w", err)
	}
	// Room for a few mounts more, in case one appears between the calls.
	buf := make([]unix.Statfs_t, n+8)
	if n, err = unix.Getfsstat(buf, unix.MNT_NOWAIT); err != nil {
		return nil, fmt.Errorf("volume: getfsstat: %w", err)
	}
	out := []Mount{}
	for _, st := range buf[:n] {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		point, fsType := unix.ByteSliceToString(st.Mntonname[:]), unix.ByteSliceToString(st.Fstypename[:])
		flags := uint64(st.Flags)
		if point != "/" && (flags&unix.MNT_LOCAL == 0 || hiddenMount(flags, point)) || !Local(point, fsType) {
			continue
		}
		out = append(out, Mount{MountPoint: point, Device: unix.ByteSliceToString(st.Mntfromname[:]), FSType: fsType,
			Portable: removableMount(flags)})
	}
	return out, nil
}
