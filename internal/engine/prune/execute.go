package prune

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/index"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
)

var errIndexLoaded = errors.New("prune: the repository's index must not be loaded before prune")

// needsWork: something to delete or repack, stale entries to drop, or
// index files worth merging (plan.merge).
func (p *plan) needsWork() bool {
	return p.count(actDelete)+p.count(actRepack)+p.stalePacks() > 0 || p.merge
}

// summarize fills the counts of the plan, what it keeps and why (and, on a
// dry run, what would be deleted and reclaimed).
func (p *plan) summarize(opts Options) *Result {
	res := &Result{DryRun: opts.DryRun, Snapshots: len(p.snapshots), BlobsUsed: p.used.Len(),
		IndexFilesScanned: len(p.indexFiles), StalePacks: p.stalePacks(), PacksScanned: p.stored.Stored(),
		Kept: Kept{MarginSeconds: opts.Margin.Seconds(), MaxUnused: opts.MaxUnused}}
	p.each(actProtect, func(pi packInfo) {
		res.Kept.UnindexedPacks++
		res.Kept.UnindexedBytes += pi.obj.Size
	})
	p.each(actKeep, func(pi packInfo) {
		if unused := pi.blobBytes - pi.usedBytes; unused > 0 {
			res.Kept.PartlyUsedPacks++
			res.Kept.UnusedBytes += unused
		}
	})
	if !opts.DryRun {
		return res
	}
	p.each(actDelete, func(pi packInfo) {
		res.PacksDeleted++
		if !pi.indexed() {
			res.UnindexedPacksDeleted++
		}
		res.BytesDeleted += pi.obj.Size
		res.WouldDelete = append(res.WouldDelete, pi.obj.Key)
	})
	p.each(actRepack, func(pi packInfo) {
		res.PacksRepacked++
		res.BytesDeleted += pi.obj.Size
		res.BytesWritten += pi.usedBytes
		res.WouldDelete = append(res.WouldDelete, pi.obj.Key)
	})
	if p.needsWork() {
		for _, f := range p.indexFiles {
			res.IndexFilesDeleted++
			res.WouldDelete = append(res.WouldDelete, f.Key)
		}
	}
	res.BytesReclaimed = res.BytesDeleted - res.BytesWritten
	return res
}

// execute repacks, writes the merged index, then deletes superseded index
// files and, last, old packs.
func (p *plan) execute(ctx context.Context, w *repo.ExclusiveWriter, opts Options, res *Result) error {
	if pr := opts.Progress; pr != nil {
		// Objects: packs to repack, then index files and packs to delete.
		repack, del := 0, p.count(actDelete)
		p.each(actRepack, func(pi packInfo) {
			repack++
			pr.BytesTotal.Add(pi.obj.Size)
		})
		pr.ObjectsTotal.Store(int64(2*repack + del + len(p.indexFiles)))
	}
	written, err := p.repack(ctx, w, opts, res)
	if err != nil {
		return err
	}
	kept, newFiles, err := p.writeMergedIndex(ctx, w)
	if err != nil {
		return err
	}
	res.IndexFilesWritten += len(newFiles)
	for _, f := range newFiles {
		written.indexFiles[f] = true
	}
	opts.logf("merged index written: %d packs in %d files", kept, len(newFiles))
	if err := p.checkUnchanged(ctx, w, written); err != nil {
		return err
	}
	// Superseded index files go before the packs they name: a crash in
	// between leaves unindexed packs (a harmless leftover a later prune
	// removes once the margin has passed), never an index entry pointing
	// at a deleted pack, which a restore could read from and a backup
	// could deduplicate against.
	var idxFiles []repo.ObjectEntry
	for _, f := range p.indexFiles {
		if !written.indexFiles[f.ID] {
			idxFiles = append(idxFiles, f)
		}
	}
	if err := deleteAll(ctx, w, opts, "index files", idxFiles); err != nil {
		return err
	}
	res.IndexFilesDeleted = len(idxFiles)
	var packs []repo.ObjectEntry
	for _, act := range []action{actDelete, actRepack} {
		p.each(act, func(pi packInfo) {
			if written.packs[pi.obj.ID] {
				return
			}
			packs = append(packs, pi.obj)
			res.BytesDeleted += pi.obj.Size
			switch {
			case pi.act == actRepack:
				res.PacksRepacked++
			case pi.indexed():
				res.PacksDeleted++
			default:
				res.PacksDeleted++
				res.UnindexedPacksDeleted++
			}
		})
	}
	if err := deleteAll(ctx, w, opts, "packs", packs); err != nil {
		return err
	}
	return nil
}

// mergedIndexBatch is how many packs' entries writeMergedIndex holds at
// once: one index file's worth.
const mergedIndexBatch = 4096

// writeMergedIndex writes index files naming the blobs of every pack kept,
// a batch of packs at a time, their blobs read from the index files again
// (ScratchIndex.EachPack), and returns how many packs they name.
func (p *plan) writeMergedIndex(ctx context.Context, w *repo.ExclusiveWriter) (int, []id.ID, error) {
	var files []id.ID
	var batch []index.PackBlobs
	kept := 0
	flush := func() error {
		ids, err := w.WriteIndex(ctx, batch)
		files = append(files, ids...)
		batch = nil
		return err
	}
	err := p.scratch.EachPack(ctx, func(pb index.PackBlobs) error {
		if n, ok := p.scratch.PackNumber(pb.ID); !ok || !p.keeps(n) {
			return nil
		}
		batch = append(batch, pb)
		kept++
		if len(batch) == p.mergeBatch {
			return flush()
		}
		return nil
	}, func(fid id.ID, err error) error {
		// Nothing is deleted yet: stop, as a failure to read it at first
		// would have.
		return damageOr(err, "index file %s, read again to write the merged index", fid.Short())
	})
	if err == nil && len(batch) > 0 {
		err = flush()
	}
	if err != nil {
		return 0, files, err
	}
	return kept, files, nil
}

// stored is what this run wrote: packs and index files, by id.
type stored struct {
	packs, indexFiles map[id.ID]bool
}

// repack copies the used blobs of the packs to repack into new packs
// (with their own index files) and returns what it wrote.
func (p *plan) repack(ctx context.Context, w *repo.ExclusiveWriter, opts Options, res *Result) (stored, error) {
	written := stored{packs: make(map[id.ID]bool), indexFiles: make(map[id.ID]bool)}
	todo := p.sorted(actRepack)
	if len(todo) == 0 {
		return written, nil
	}
	// Repacked data is compressed with zstd whatever the backup used: it
	// is data that stayed, and prune is not on a backup's clock.
	saver := w.NewSaver(ctx, 2, pack.Zstd)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(opts.Workers)
	for i, pi := range todo {
		g.Go(func() error {
			if err := repackOne(gctx, w.Repository, saver, pi.obj.ID, p.usedEntries(pi)); err != nil {
				return err
			}
			if pr := opts.Progress; pr != nil {
				pr.Objects.Add(1)
				pr.Bytes.Add(pi.obj.Size)
			}
			opts.logf("repacked %d/%d packs", i+1, len(todo))
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		saver.Abort()
		return written, err
	}
	if err := saver.Flush(ctx); err != nil {
		return written, err
	}
	st := saver.Stats()
	res.PacksWritten = int(st.PacksStored)
	res.IndexFilesWritten = int(st.IndexFiles)
	res.BytesWritten = st.BytesAdded
	// Every pack the index names is kept: a pack the repack wrote that
	// went unlisted would be deleted with the packs it replaced.
	packs, err := w.Index().Packs(ctx)
	if err != nil {
		return written, fmt.Errorf("listing the packs the repack wrote: %w", err)
	}
	for _, pid := range packs {
		written.packs[pid] = true
	}
	return written, nil
}

// repackOne saves the used blobs of pack pid again, through saver.
func repackOne(ctx context.Context, r *repo.Repository, saver *repo.Saver, pid id.ID, used []pack.Entry) error {
	data, err := r.ReadPack(ctx, pid)
	if errors.Is(err, repo.ErrCorrupt) {
		return fmt.Errorf("%w: pack %s does not match its name", ErrDamaged, pid.Short())
	}
	if err != nil {
		return fmt.Errorf("reading pack %s to repack: %w", pid.Short(), err)
	}
	for _, e := range used {
		plain, err := r.DecodeBlobFromPack(data, e)
		if err != nil {
			return fmt.Errorf("%w: pack %s: %w", ErrDamaged, pid.Short(), err)
		}
		if _, err := saver.Save(ctx, e.Type, e.ID, plain); err != nil {
			return err
		}
	}
	return nil
}
