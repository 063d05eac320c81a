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

// indexFileBatch is how many packs one new index file names (what prune's
// merged index files hold).
const indexFileBatch = 4096

// logEvery is how many pack headers go between two progress messages.
const logEvery = 1000

// IndexOptions configure Index.
type IndexOptions struct {
	// DryRun reads everything and reports what would be written and
	// removed, but changes nothing (and needs no lock).
	DryRun bool
	// Workers is the number of pack headers read at once (default 8).
	Workers int
	// Logf receives progress messages (nil: none).
	Logf func(format string, args ...any)
}

func (o IndexOptions) logf(format string, args ...any) {
	if o.Logf != nil {
		o.Logf(format, args...)
	}
}

// UnreadablePack is a pack whose own header could not be read.
type UnreadablePack struct {
	repo.Damaged
	// EntriesKept counts the entries a readable old index file gave for
	// it, written to the new index; 0 means its blobs are in no index now.
	EntriesKept int
}

// IndexResult is what Index found and did (on a dry run: would do).
type IndexResult struct {
	DryRun bool
	// Packs counts the packs listed under data/.
	Packs int
	// PacksIndexed counts the packs the new index files name, Blobs their
	// entries.
	PacksIndexed, Blobs int
	// UnreadablePacks lists the packs whose header could not be read, by
	// key. They are left in place.
	UnreadablePacks []UnreadablePack
	// StalePacks counts the packs an old index file named that are not on
	// the store: the new index does not name them.
	StalePacks int
	// OldIndexFiles counts the index files listed before the rebuild;
	// DamagedIndexFiles lists those of them that could not be read.
	OldIndexFiles     int
	DamagedIndexFiles []repo.Damaged
	// IndexFilesWritten and IndexFilesRemoved count the new index files
	// and the old ones deleted after them.
	IndexFilesWritten, IndexFilesRemoved int
}

// Index rebuilds the index of the repository w writes to from the packs'
// own headers, under w's lease, the exclusive lock. See the package
// documentation for what it writes and why an interruption is safe. The
// repository's in-memory index must not be loaded. With opts.DryRun,
// Index is IndexDryRun on w's view.
func Index(ctx context.Context, w *repo.ExclusiveWriter, opts IndexOptions) (*IndexResult, error) {
	if w == nil {
		return nil, repo.ErrNoLease
	}
	if opts.DryRun {
		return IndexDryRun(ctx, w.Repository, opts)
	}
	return rebuildIndex(ctx, w.Repository, w, opts)
}

// IndexDryRun says what Index would write and remove, reading r with no
// lock and changing nothing (opts.DryRun is implied).
func IndexDryRun(ctx context.Context, r *repo.Repository, opts IndexOptions) (*IndexResult, error) {
	opts.DryRun = true
	return rebuildIndex(ctx, r, nil, opts)
}

// rebuildIndex is Index reading r, writing through w (nil on a dry run).
func rebuildIndex(ctx context.Context, r *repo.Repository, w *repo.ExclusiveWriter, opts IndexOptions) (*IndexResult, error) {
	if opts.Workers <= 0 {
		opts.Workers = 8
	}
	if r.Index().Len() != 0 {
		return nil, errors.New("repair index: the repository's index must not be loaded")
	}
	res := &IndexResult{DryRun: opts.DryRun}
	oldFiles, _, err := r.ListObjects(ctx, repo.IndexPrefix)
	if err != nil {
		return nil, fmt.Errorf("listing index files: %w", err)
	}
	res.OldIndexFiles = len(oldFiles)
	old, readable, err := readOldIndex(ctx, r, oldFiles, res)
	if err != nil {
		return nil, err
	}
	// Packs are listed after the index files, as prune does: every pack an
	// index file read names is in this listing if it still exists.
	packs, _, err := r.ListObjects(ctx, repo.DataPrefix)
	if err != nil {
		return nil, fmt.Errorf("listing packs: %w", err)
	}
	res.Packs = len(packs)
	headers, err := readHeaders(ctx, r, packs, opts)
	if err != nil {
		return nil, err
	}
	rebuilt, headersRead := rebuild(packs, headers, old, res)
	if readable == 0 && headersRead == 0 && len(res.UnreadablePacks)+len(res.DamagedIndexFiles) > 0 {
		return res, ErrNoProof
	}
	res.IndexFilesWritten = (len(rebuilt) + indexFileBatch - 1) / indexFileBatch
	if w == nil {
		res.IndexFilesRemoved = len(oldFiles)
		return res, nil
	}
	res.IndexFilesWritten = 0
	written, err := writeIndex(ctx, w, rebuilt, res)
	if err != nil {
		return res, err
	}
	opts.logf("new index written: %d packs, %d blobs in %d files", res.PacksIndexed, res.Blobs, len(written))
	for _, f := range oldFiles {
		if written[f.ID] {
			continue // this run wrote the same file again
		}
		if err := w.DeleteUnused(ctx, f); err != nil {
			return res, err
		}
		res.IndexFilesRemoved++
	}
	return res, nil
}

// readOldIndex reads the index files listed into an index of their
// entries and counts those it read. A damaged file is recorded in res and
// skipped; any other failure to read one fails the run, before anything
// is written (its entries might be the only ones of a pack whose header
// is unreadable).
func readOldIndex(ctx context.Context, r *repo.Repository, files []repo.ObjectEntry, res *IndexResult) (*index.Index, int, error) {
	old := index.New()
	var mu sync.Mutex
	readable := 0
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4) // each file is held whole while it is decoded
	for _, f := range files {
		g.Go(func() error {
			file, err := r.IndexFile(gctx, f.ID)
			switch {
			case err == nil:
			case errors.Is(err, repo.ErrNotFound):
				return nil // deleted since the listing: nothing to keep from it
			case repo.IsDamage(err):
				mu.Lock()
				res.DamagedIndexFiles = append(res.DamagedIndexFiles, repo.Damaged{Key: f.Key, Err: err})
				mu.Unlock()
				return nil
			default:
				return fmt.Errorf("reading %s failed, nothing was changed (run repair again): %w", f.Key, err)
			}
			for _, p := range file.Packs {
				old.Add(p.ID, p.Blobs)
			}
			mu.Lock()
			readable++
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, 0, err
	}
	sort.Slice(res.DamagedIndexFiles, func(i, j int) bool {
		return res.DamagedIndexFiles[i].Key < res.DamagedIndexFiles[j].Key
	})
	return old, readable, nil
}

// header is what reading one pack's header gave: its entries, or the
// damage that made it unreadable (both nil: the pack is gone).
type header struct {
	entries []pack.Entry
	damage  error
}

// readHeaders reads the header of every pack, opts.Workers at once. A
// failure that is not damage fails the run before anything is written: a
// pack left out for a flaky read would lose its place in the index.
func readHeaders(ctx context.Context, r *repo.Repository, packs []repo.ObjectEntry, opts IndexOptions) ([]header, error) {
	out := make([]header, len(packs))
	var done int
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(opts.Workers)
	for i, p := range packs {
		g.Go(func() error {
			entries, err := r.ReadPackHeader(gctx, p.ID, p.Size)
			switch {
			case err == nil:
				out[i].entries = entries
				if entries == nil {
					out[i].entries = []pack.Entry{}
				}
			case errors.Is(err, repo.ErrNotFound):
				// Deleted since the listing: not to be indexed.
			case repo.IsDamage(err):
				out[i].damage = err
			default:
				return fmt.Errorf("reading the header of %s failed, nothing was changed (run repair again): %w", p.Key, err)
			}
			mu.Lock()
			done++
			if done%logEvery == 0 || done == len(packs) {
				opts.logf("read %d/%d pack headers", done, len(packs))
			}
			mu.Unlock()
			return nil
		})
	}
	return out, g.Wait()
}

// rebuild returns the packs of the new index, by id, and how many headers
// were read, and fills res's counts. The new index names every pack whose
// header was read, with its header's entries (and the plain lengths an old
// index file gave for the same locations), and every unreadable pack an
// old index file named, with that file's entries.
func rebuild(packs []repo.ObjectEntry, headers []header, old *index.Index, res *IndexResult) ([]index.PackBlobs, int) {
	var out []index.PackBlobs
	headersRead := 0
	onStore := make(map[id.ID]bool, len(packs))
	for i, p := range packs {
		onStore[p.ID] = true
		h := headers[i]
		switch {
		case h.entries != nil:
			headersRead++
			out = append(out, index.PackBlobs{ID: p.ID, Blobs: withPlainLengths(h.entries, old.PackEntries(p.ID))})
		case h.damage != nil:
			up := UnreadablePack{Damaged: repo.Damaged{Key: p.Key, Err: h.damage}}
			if known := old.PackEntries(p.ID); len(known) > 0 {
				out = append(out, index.PackBlobs{ID: p.ID, Blobs: known})
				up.EntriesKept = len(known)
			}
			res.UnreadablePacks = append(res.UnreadablePacks, up)
		}
	}
	for _, pid := range old.Packs() {
		if !onStore[pid] {
			res.StalePacks++
		}
	}
	sort.Slice(out, func(i, j int) bool { return string(out[i].ID[:]) < string(out[j].ID[:]) })
	sort.Slice(res.UnreadablePacks, func(i, j int) bool { return res.UnreadablePacks[i].Key < res.UnreadablePacks[j].Key })
	res.PacksIndexed = len(out)
	for _, p := range out {
		res.Blobs += len(p.Blobs)
	}
	return out, headersRead
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

// writeIndex stores the new index files, a batch of packs each, and
// returns their ids.
func writeIndex(ctx context.Context, w *repo.ExclusiveWriter, packs []index.PackBlobs, res *IndexResult) (map[id.ID]bool, error) {
	written := make(map[id.ID]bool)
	for start := 0; start < len(packs); start += indexFileBatch {
		ids, err := w.WriteIndex(ctx, packs[start:min(start+indexFileBatch, len(packs))])
		for _, fid := range ids {
			written[fid] = true
		}
		res.IndexFilesWritten += len(ids)
		if err != nil {
			return written, err
		}
	}
	return written, nil
}
