package repo

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/store"
)

// LoadSnapshot reads one snapshot.
func (r *Repository) LoadSnapshot(ctx context.Context, sid id.ID) (*snapshot.Snapshot, error) {
	plain, err := r.loadSealed(ctx, SnapshotKey(sid))
	if err != nil {
		return nil, err
	}
	return decodeSnapshot(sid, plain)
}

// LoadSnapshotBytes reads snapshot sid's plaintext as stored, before any
// decoding: the bytes LoadSnapshot decodes, which cat -raw prints.
func (r *Repository) LoadSnapshotBytes(ctx context.Context, sid id.ID) ([]byte, error) {
	return r.loadSealed(ctx, SnapshotKey(sid))
}

// decodeSnapshot decodes the plaintext of snapshot sid.
func decodeSnapshot(sid id.ID, plain []byte) (*snapshot.Snapshot, error) {
	s, err := snapshot.Decode(plain)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", SnapshotKey(sid), err)
	}
	return s, nil
}

// RereadSnapshot reads snapshot sid once more, straight from the store
// (never from the metadata cache), and decodes it: nil when it is sound;
// an error IsDamage holds for when its stored bytes are wrong; any other
// error when it could not be read, which proves nothing. repair snapshots
// deletes a snapshot only on a second proof of damage from it.
func (r *Repository) RereadSnapshot(ctx context.Context, sid id.ID) error {
	plain, err := r.loadSealedFromStore(ctx, SnapshotKey(sid))
	if err != nil {
		return err
	}
	_, err = decodeSnapshot(sid, plain)
	return err
}

// Snapshots loads every snapshot, oldest first. A snapshot whose stored
// bytes are damaged (IsDamage) is skipped and returned in damaged, sorted
// by key; one deleted since the listing (by a forget) is left out. Any
// other failure to read one (network, permissions, cancellation) fails
// the call: it says nothing about the snapshot, which must not look absent.
func (r *Repository) Snapshots(ctx context.Context) (snaps []snapshot.WithID, damaged []Damaged, err error) {
	ids, _, err := r.ListIDs(ctx, SnapshotPrefix)
	if err != nil {
		return nil, nil, fmt.Errorf("listing snapshots: %w", err)
	}
	loaded := make([]*snapshot.Snapshot, len(ids))
	bad := make([]error, len(ids))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i, sid := range ids {
		g.Go(func() error {
			s, err := r.LoadSnapshot(gctx, sid)
			switch {
			case err == nil:
				loaded[i] = s
			case errors.Is(err, store.ErrNotFound):
				// Forgotten since the listing.
			case IsDamage(err):
				bad[i] = err
			default:
				return err
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	for i, sid := range ids {
		switch {
		case loaded[i] != nil:
			snaps = append(snaps, snapshot.WithID{ID: sid, Snapshot: loaded[i]})
		case bad[i] != nil:
			damaged = append(damaged, Damaged{Key: SnapshotKey(sid), Err: bad[i]})
		}
	}
	snapshot.SortByTime(snaps)
	sortDamaged(damaged)
	r.noteDamaged(damaged)
	return snaps, damaged, nil
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
