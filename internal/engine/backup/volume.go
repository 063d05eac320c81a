package backup

import (
	"context"
	"errors"
	"fmt"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/source/local"
	"github.com/cloudstic/cloudstic/internal/source/volume"
)

// volumeOf is the volume recorded for a backup of real (a local source's
// path, symlinks resolved): with opts.VolumeUUID that UUID, else the
// detected UUID of a portable drive (see package volume), else none. A
// portable drive whose UUID cannot be read gets a warning and none.
func volumeOf(ctx context.Context, real string, opts Options) (*snapshot.Volume, error) {
	if _, isLocal := opts.Source.(local.Source); !isLocal {
		if opts.VolumeUUID != "" {
			return nil, fmt.Errorf("%w: -volume-uuid applies to local sources only", ErrSource)
		}
		return nil, nil
	}
	sys := volume.System{}
	v, err := sys.Locate(real)
	if err != nil {
		if opts.VolumeUUID == "" {
			// Without a mount table the source is grouped by host, as before.
			return nil, nil
		}
		return nil, fmt.Errorf("-volume-uuid: %w", err)
	}
	if opts.VolumeUUID != "" {
		return &snapshot.Volume{UUID: opts.VolumeUUID, Path: v.Path}, nil
	}
	if !v.Portable {
		return nil, nil
	}
	uuid, _, err := sys.UUID(ctx, v.Device)
	if errors.Is(err, volume.ErrNoIdentity) {
		if opts.Warnf != nil {
			opts.Warnf("%s is on the portable device %s, whose UUID could not be read (%v): its snapshots are grouped by host and path; give -volume-uuid to group them by volume", real, v.Device, err)
		}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &snapshot.Volume{UUID: uuid, Path: v.Path}, nil
}

// findParent returns the latest snapshot of snap's group. A snapshot with
// a volume whose group has none falls back to the latest of its source
// and host recorded without a volume (by a version that did not record
// volumes, or before the drive was identified).
func findParent(snaps []snapshot.WithID, snap *snapshot.Snapshot) (snapshot.WithID, bool) {
	p, err := repo.FindSnapshot(snaps, "latest", func(s *snapshot.Snapshot) bool { return s.Group() == snap.Group() })
	if err == nil {
		return p, true
	}
	if snap.Volume == nil {
		return snapshot.WithID{}, false
	}
	p, err = repo.FindSnapshot(snaps, "latest", func(s *snapshot.Snapshot) bool {
		return s.Volume == nil && s.HostGroup() == snap.HostGroup()
	})
	return p, err == nil
}
