package repair

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/index"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
)

// Index keeps in memory what it knows of each pack, not of each blob:
// the old index files' pack listings (repo.ScratchIndex, pack listings
// only) and the store's listing of the packs (repo.StoredPacks), a few
// dozen bytes a pack. The blobs are streamed: the old index files are
// read a second time, one at a time, for each pack's old entries
// (ScratchIndex.EachPack), the headers of a batch of packs are read, and
// the new entries are written as index files as soon as they fill one.
// A pack an old index file lists costs ~72 bytes (~450 MB at 100 M blobs
// in packs of 16: 6 M packs), one none lists ~48 (repo.StoredPacks), where the old index in memory took ~82 bytes a blob (8 GB) and
// the headers read as much again; beside them, the entries of one old
// index file and of two batches of packs.

// rebuilder streams the packs through their header reads into new index
// files.
type rebuilder struct {
	r    *repo.Repository
	w    *repo.ExclusiveWriter // nil: dry run
	opts IndexOptions
	res  *IndexResult
	// todo are the packs whose headers are read next (at most a batch),
	// out the new index's packs not written yet.
	todo []packJob
	out  []index.PackBlobs
	// written are the index files this run wrote, by id.
	written map[id.ID]bool
	// headersRead counts the headers read, done the packs handled.
	headersRead, done int
}

// packJob is one pack on the store, with the entries of its first old
// listing (nil when no readable index file lists it), and what reading
// its header gave: read (with entries), damage, or neither when it is
// gone since the listing.
type packJob struct {
	obj     repo.ObjectEntry
	old     []pack.Entry
	read    bool
	entries []pack.Entry
	damage  error
}

// run rebuilds the index: the packs the old index files list (by their
// first listing), those on the store none lists, then the rest of the
// last batch. It counts the stale packs.
func (rb *rebuilder) run(ctx context.Context, old *repo.ScratchIndex, stored *repo.StoredPacks) error {
	for n := range old.PackCount() {
		if !stored.OnStore(n) {
			rb.res.StalePacks++
		}
	}
	err := old.EachPack(ctx, func(pb index.PackBlobs) error {
		n, _ := old.PackNumber(pb.ID) // listed: EachPack yields only listed packs
		o, ok := stored.Entry(n)
		if !ok {
			return nil // stale: not on the store, not in the new index
		}
		return rb.add(ctx, packJob{obj: o, old: pb.Blobs})
	}, func(fid id.ID, err error) error {
		// Its entries may be the only ones of a pack whose header is
		// unreadable: stop, as a failure to read it at first does.
		return fmt.Errorf("reading %s again failed, %s: %w", repo.IndexKey(fid), rb.changed(), err)
	})
	if err != nil {
		return err
	}
	for i := range stored.UnindexedCount() {
		if err := rb.add(ctx, packJob{obj: stored.Unindexed(i)}); err != nil {
			return err
		}
	}
	if err := rb.readHeaders(ctx); err != nil {
		return err
	}
	if err := rb.flush(ctx, true); err != nil {
		return err
	}
	sort.Slice(rb.res.UnreadablePacks, func(i, j int) bool {
		return rb.res.UnreadablePacks[i].Key < rb.res.UnreadablePacks[j].Key
	})
	return nil
}

// changed says, for an error message, what the run changed so far.
func (rb *rebuilder) changed() string {
	if rb.res.DryRun || rb.res.IndexFilesWritten == 0 {
		return "nothing was changed (run repair again)"
	}
	return "the index files written so far are correct and every old one is still there (run repair again)"
}

// add queues pack j and, once a batch is queued, reads their headers and
// writes the new index files they fill.
func (rb *rebuilder) add(ctx context.Context, j packJob) error {
	rb.todo = append(rb.todo, j)
	if len(rb.todo) < rb.opts.batch {
		return nil
	}
	if err := rb.readHeaders(ctx); err != nil {
		return err
	}
	return rb.flush(ctx, false)
}

// readHeaders reads the headers of the packs queued, opts.Workers at
// once, and adds them to the new index: every pack whose header was read,
// with its header's entries (and the plain lengths its old listing gave
// for the same locations), and every unreadable pack an old index file
// lists, with that listing's entries. A failure that is not damage fails
// the run: a pack left out for a flaky read would lose its place in the
// index.
func (rb *rebuilder) readHeaders(ctx context.Context) error {
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(rb.opts.Workers)
	for i := range rb.todo {
		j := &rb.todo[i]
		g.Go(func() error {
			entries, err := rb.r.ReadPackHeader(gctx, j.obj.ID, j.obj.Size, len(j.old))
			switch {
			case err == nil:
				j.read, j.entries = true, entries
			case errors.Is(err, repo.ErrNotFound):
				// Deleted since the listing: not to be indexed.
			case repo.IsDamage(err):
				j.damage = err
			default:
				return fmt.Errorf("reading the header of %s failed, %s: %w", j.obj.Key, rb.changed(), err)
			}
			mu.Lock()
			rb.done++
			if done, total := rb.done, rb.res.Packs; done%logEvery == 0 || done == total {
				rb.opts.logf("read %d/%d pack headers", done, total)
			}
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for _, j := range rb.todo {
		switch {
		case j.read:
			rb.headersRead++
			rb.out = append(rb.out, index.PackBlobs{ID: j.obj.ID, Blobs: withPlainLengths(j.entries, j.old)})
		case j.damage != nil:
			up := UnreadablePack{Damaged: repo.Damaged{Key: j.obj.Key, Err: j.damage}}
			if len(j.old) > 0 {
				rb.out = append(rb.out, index.PackBlobs{ID: j.obj.ID, Blobs: j.old})
				up.EntriesKept = len(j.old)
			}
			rb.res.UnreadablePacks = append(rb.res.UnreadablePacks, up)
		}
	}
	clear(rb.todo) // let go of the entries
	rb.todo = rb.todo[:0]
	return nil
}

// flush writes the new index's packs not written yet, a batch to a file,
// the last one short when final. Only packs whose header was read, or
// entries of a readable old index file, are ever written: with neither
// there is no proof that the key is right (ErrNoProof), and nothing to
// write.
func (rb *rebuilder) flush(ctx context.Context, final bool) error {
	for len(rb.out) >= rb.opts.batch || final && len(rb.out) > 0 {
		n := min(rb.opts.batch, len(rb.out))
		if err := rb.write(ctx, rb.out[:n]); err != nil {
			return err
		}
		rest := copy(rb.out, rb.out[n:])
		clear(rb.out[rest:])
		rb.out = rb.out[:rest]
	}
	return nil
}

// write stores one batch of the new index (on a dry run, counts the file
// it would be).
func (rb *rebuilder) write(ctx context.Context, batch []index.PackBlobs) error {
	rb.res.PacksIndexed += len(batch)
	for _, p := range batch {
		rb.res.Blobs += len(p.Blobs)
	}
	if rb.w == nil {
		rb.res.IndexFilesWritten++
		return nil
	}
	ids, err := rb.w.WriteIndex(ctx, batch)
	for _, fid := range ids {
		rb.written[fid] = true
	}
	rb.res.IndexFilesWritten += len(ids)
	if err != nil {
		// The write that failed may have reached the store.
		return fmt.Errorf("writing the new index failed, every old index file is still there (run repair again): %w", err)
	}
	return nil
}

// withPlainLengths gives the entries of a pack's header the plain lengths
// (which headers do not record) of the old index's entries at the same
// locations.
func withPlainLengths(entries, known []pack.Entry) []pack.Entry {
	if len(known) == 0 {
		return entries
	}
	byOffset := make(map[uint32]pack.Entry, len(known))
	for _, k := range known {
		byOffset[k.Offset] = k
	}
	for i := range entries {
		if k, ok := byOffset[entries[i].Offset]; ok && entries[i].SameLocation(k) {
			entries[i].Plain = k.Plain
		}
	}
	return entries
}
