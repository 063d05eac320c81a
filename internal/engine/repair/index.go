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
)

// indexFileBatch is how many packs one new index file names (what prune's
// merged index files hold): the rebuild holds the entries of at most two
// such batches at once.
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
	// batch is how many packs a new index file names (0:
	// indexFileBatch); tests make it small.
	batch int
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
	if opts.batch <= 0 {
		opts.batch = indexFileBatch
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
	old := r.NewPackListings()
	defer old.Close()
	readable, err := readOldIndex(ctx, r, oldFiles, old, res)
	if err != nil {
		return nil, err
	}
	// Packs are listed after the index files, as prune does: every pack an
	// index file read names is in this listing if it still exists.
	stored, _, err := old.ListPacks(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing packs: %w", err)
	}
	res.Packs = stored.Stored()
	rb := &rebuilder{r: r, w: w, opts: opts, res: res, written: make(map[id.ID]bool)}
	if err := rb.run(ctx, old, stored); err != nil {
		return res, err
	}
	// Nothing was written: with no readable old index file, only the
	// headers read give entries to write (see rebuilder.flush).
	if readable == 0 && rb.headersRead == 0 && len(res.UnreadablePacks)+len(res.DamagedIndexFiles) > 0 {
		return res, ErrNoProof
	}
	if w == nil {
		res.IndexFilesRemoved = len(oldFiles)
		return res, nil
	}
	opts.logf("new index written: %d packs, %d blobs in %d files", res.PacksIndexed, res.Blobs, res.IndexFilesWritten)
	for _, f := range oldFiles {
		if rb.written[f.ID] {
			continue // this run wrote the same file again
		}
		if err := w.DeleteUnused(ctx, f); err != nil {
			return res, err
		}
		res.IndexFilesRemoved++
	}
	return res, nil
}

// readOldIndex reads the index files listed into the pack listings old
// and counts those it read. A damaged file is recorded in res and
// skipped; any other failure to read one fails the run, before anything
// is written (its entries might be the only ones of a pack whose header
// is unreadable).
func readOldIndex(ctx context.Context, r *repo.Repository, files []repo.ObjectEntry, old *repo.ScratchIndex, res *IndexResult) (int, error) {
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
			if err := old.AddFile(f.ID, file); err != nil {
				return err
			}
			mu.Lock()
			readable++
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return 0, err
	}
	sort.Slice(res.DamagedIndexFiles, func(i, j int) bool {
		return res.DamagedIndexFiles[i].Key < res.DamagedIndexFiles[j].Key
	})
	return readable, nil
}
