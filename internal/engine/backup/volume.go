package backup

import (
	"context"
	"errors"
	"fmt"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
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

// setParent finds the parent of res.Snapshot among heads (see findParent)
// and records it in res and in the snapshot. It returns the parent's tree,
// zero when there is no parent.
func (res *Result) setParent(ctx context.Context, r *repo.Repository, heads []snapshot.Head) (id.ID, error) {
	p, ok, err := findParent(ctx, r, heads, res.Snapshot)
	if err != nil || !ok {
		return id.ID{}, err
	}
	res.Parent = &p
	res.Snapshot.Parent = p.ID
	return p.Tree, nil
}

// findParent returns the latest snapshot of snap's group among heads
// (oldest first), loaded from r. A snapshot with a volume whose group has
// none falls back to the latest of its source and host recorded without a
// volume (by a version that did not record volumes, or before the drive
// was identified). ok is false when there is no such snapshot. A parent
// whose object turns out damaged (its head came from the metadata cache's
// heads file) is reported to r's damage watcher and passed over for the
// next latest: it costs reading unchanged files again, never the backup.
func findParent(ctx context.Context, r *repo.Repository, heads []snapshot.Head, snap *snapshot.Snapshot) (p snapshot.WithID, ok bool, err error) {
	damaged := map[id.ID]bool{}
	usable := func(h snapshot.Head) bool { return !damaged[h.ID] }
	for {
		h, ok := snapshot.Latest(heads, func(h snapshot.Head) bool { return usable(h) && h.Group == snap.Group() })
		if !ok && snap.Volume != nil {
			h, ok = snapshot.Latest(heads, func(h snapshot.Head) bool { return usable(h) && !h.Volume && h.Group == snap.HostGroup() })
		}
		if !ok {
			return snapshot.WithID{}, false, nil
		}
		s, err := r.LoadSnapshot(ctx, h.ID)
		if repo.IsDamage(err) {
			r.ReportDamaged(repo.Damaged{Key: repo.SnapshotKey(h.ID), Err: err})
			damaged[h.ID] = true
			continue
		}
		if err != nil {
			return snapshot.WithID{}, false, fmt.Errorf("loading the parent snapshot: %w", err)
		}
		if got := snapshot.HeadOf(h.ID, s); got.Group != h.Group || got.Volume != h.Volume {
			return snapshot.WithID{}, false, fmt.Errorf("parent snapshot %s: %w: its group is not the one listed for it", h.ID, repo.ErrCorrupt)
		}
		return snapshot.WithID{ID: h.ID, Snapshot: s}, true, nil
	}
}
