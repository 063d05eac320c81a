package repo

import (
	"context"
	"encoding/hex"
	"fmt"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
)

// SaveSnapshot stores a snapshot and returns its id.
func (r *Repository) SaveSnapshot(ctx context.Context, s *snapshot.Snapshot) (id.ID, error) {
	plain, err := snapshot.Encode(s)
	if err != nil {
		return id.ID{}, err
	}
	sid, err := r.saveSealed(ctx, SnapshotPrefix, plain)
	if err != nil {
		return id.ID{}, fmt.Errorf("saving snapshot: %w", err)
	}
	return sid, nil
}

// LoadSnapshot reads one snapshot.
func (r *Repository) LoadSnapshot(ctx context.Context, sid id.ID) (*snapshot.Snapshot, error) {
	plain, err := r.loadSealed(ctx, SnapshotKey(sid))
	if err != nil {
		return nil, err
	}
	s, err := snapshot.Decode(plain)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", SnapshotKey(sid), err)
	}
	return s, nil
}

// Snapshots loads every snapshot, oldest first.
func (r *Repository) Snapshots(ctx context.Context) ([]snapshot.WithID, error) {
	ids, _, err := r.ListIDs(ctx, SnapshotPrefix)
	if err != nil {
		return nil, fmt.Errorf("listing snapshots: %w", err)
	}
	out := make([]snapshot.WithID, len(ids))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i, sid := range ids {
		g.Go(func() error {
			s, err := r.LoadSnapshot(gctx, sid)
			if err != nil {
				return err
			}
			out[i] = snapshot.WithID{ID: sid, Snapshot: s}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	snapshot.SortByTime(out)
	return out, nil
}

// MinPrefix is the shortest snapshot id prefix accepted.
const MinPrefix = 6

// FindSnapshot resolves "latest" or an id prefix of at least MinPrefix hex
// digits among list (oldest first). For "latest", match picks which
// snapshots count (nil: all).
func FindSnapshot(list []snapshot.WithID, ref string, match func(*snapshot.Snapshot) bool) (snapshot.WithID, error) {
	if ref == "" || ref == "latest" {
		for i := len(list) - 1; i >= 0; i-- {
			if match == nil || match(list[i].Snapshot) {
				return list[i], nil
			}
		}
		return snapshot.WithID{}, fmt.Errorf("%w: the repository has no snapshots yet", ErrNoSnapshot)
	}
	ref = strings.ToLower(ref)
	if len(ref) < MinPrefix || len(ref) > 64 {
		return snapshot.WithID{}, fmt.Errorf("snapshot id %q: give \"latest\" or at least %d hex digits", ref, MinPrefix)
	}
	if _, err := hex.DecodeString(ref[:len(ref)&^1]); err != nil {
		return snapshot.WithID{}, fmt.Errorf("snapshot id %q is not hexadecimal", ref)
	}
	var found []snapshot.WithID
	for _, s := range list {
		if strings.HasPrefix(s.ID.String(), ref) {
			found = append(found, s)
		}
	}
	switch len(found) {
	case 0:
		return snapshot.WithID{}, fmt.Errorf("%w: no snapshot id starts with %q", ErrNoSnapshot, ref)
	case 1:
		return found[0], nil
	}
	return snapshot.WithID{}, fmt.Errorf("%w: %q matches %d snapshots; give more digits", ErrAmbiguous, ref, len(found))
}
