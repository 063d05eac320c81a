package repo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/store"
)

// headsFile is the name of the metadata cache's derived file holding the
// heads of the snapshots listed last (see SnapshotHeads).
const headsFile = "snapshot-heads"

// SnapshotHeads returns the heads of every snapshot, oldest first: what
// finding a backup's parent needs (a backup then loads only its parent).
// It lists snapshots/ and, with a metadata cache (or a cache of derived
// files only: SetDerivedCache), takes the heads of the snapshots it has
// seen before from one file of the cache, sealed like the repository's
// objects, so that a repository of many snapshots costs one small read
// instead of reading and decoding every snapshot; it loads
// only the snapshots that file does not name, then rewrites it. Without a
// cache, or when the file is missing or cannot be opened, it loads every
// snapshot. Damaged snapshots are skipped and returned as Snapshots does
// (the heads file never names them, so they are read, and reported, again
// until they are removed); other read failures fail the call.
func (r *Repository) SnapshotHeads(ctx context.Context) ([]snapshot.Head, []Damaged, error) {
	ids, _, err := r.ListIDs(ctx, SnapshotPrefix)
	if err != nil {
		return nil, nil, fmt.Errorf("listing snapshots: %w", err)
	}
	known := r.cachedHeads()
	heads := make([]snapshot.Head, len(ids))
	ok := make([]bool, len(ids))
	bad := make([]error, len(ids))
	var missing []int
	for i, sid := range ids {
		if h, found := known[sid]; found {
			heads[i], ok[i] = h, true
		} else {
			missing = append(missing, i)
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for _, i := range missing {
		g.Go(func() error {
			s, err := r.LoadSnapshot(gctx, ids[i])
			switch {
			case err == nil:
				heads[i], ok[i] = snapshot.HeadOf(ids[i], s), true
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
	var out []snapshot.Head
	var damaged []Damaged
	loaded := false // a head the heads file does not hold yet
	for i, sid := range ids {
		switch {
		case ok[i]:
			out = append(out, heads[i])
			_, cached := known[sid]
			loaded = loaded || !cached
		case bad[i] != nil:
			damaged = append(damaged, Damaged{Key: SnapshotKey(sid), Err: bad[i]})
		}
	}
	if r.derivedCache() != nil && (loaded || len(known) != len(out)) {
		// Best effort: a failed write only costs reading the snapshots
		// again next time.
		_ = r.saveCachedHeads(out)
	}
	snapshot.SortHeads(out)
	sortDamaged(damaged)
	r.noteDamaged(damaged)
	return out, damaged, nil
}

// cachedHeads reads the heads file of the cache, by snapshot id; empty
// when there is no cache or no usable file.
func (r *Repository) cachedHeads() map[id.ID]snapshot.Head {
	c := r.derivedCache()
	if c == nil {
		return nil
	}
	sealed, err := c.GetDerived(headsFile)
	if err != nil {
		return nil
	}
	plain, err := r.codec.DecodeRaw(sealed)
	if err != nil {
		return nil // damaged, or sealed with another key: rebuilt
	}
	var list []snapshot.Head
	if err := json.Unmarshal(plain, &list); err != nil {
		return nil
	}
	out := make(map[id.ID]snapshot.Head, len(list))
	for _, h := range list {
		out[h.ID] = h
	}
	return out
}

// saveCachedHeads replaces the heads file of the cache with list.
func (r *Repository) saveCachedHeads(list []snapshot.Head) error {
	plain, err := json.Marshal(list)
	if err != nil {
		return err
	}
	sealed, err := r.codec.EncodeRaw(plain)
	if err != nil {
		return err
	}
	return r.derivedCache().PutDerived(headsFile, sealed)
}
