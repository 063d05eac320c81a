package prune

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/index"
	"github.com/cloudstic/cloudstic/internal/repo/offheap"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// action is what prune does with one pack.
type action uint8

const (
	actKeep    action = iota // used enough: stays as it is
	actProtect               // in no index and too new to judge (see Options.Margin)
	actDelete                // nothing used in it
	actRepack                // used blobs copied out, then deleted
)

// plan is the outcome of the mark phase. Close it when done.
//
// What it knows of a pack is kept by the pack's number in the scratch
// index (ScratchIndex.NumberPacks), in slices: a repository of 100 M
// blobs in packs of 16 has 6 M packs, and a map of states took ~300
// bytes a pack. The few packs no index file lists are the store
// listing's entries (StoredPacks.Unindexed).
type plan struct {
	snapshots map[id.ID]bool
	// scratch holds every index file read, on disk (as check's: a
	// repository of 100 M blobs does not fit in memory), and disk is its
	// sorted file, each blob located in the pack to keep of its copies.
	scratch    *repo.ScratchIndex
	disk       *index.Disk
	used       *index.DiskSet
	stored     *repo.StoredPacks
	indexFiles []repo.ObjectEntry
	cutoff     time.Time
	// act and usedBytes are by pack number: what prune does with the
	// pack, and the bytes of the used blobs whose canonical copy it
	// holds. unindexedAct is by position among stored's unindexed packs.
	act          []action
	usedBytes    []int64
	unindexedAct []action
	// repackUsed holds, for each pack to repack, the canonical copies of
	// its used blobs.
	repackUsed map[int][]pack.Entry
	// frees release act and usedBytes, kept outside the Go heap (see
	// repo.ScratchIndex) like the scratch index's own tables.
	frees []func()
	// missing counts used blobs in no index or no pack on the store,
	// example is the first.
	missing int
	example id.ID
	// mergeBatch is Options.mergeBatch, and merge whether the index files
	// are worth merging even when no pack goes (see needsWork).
	mergeBatch int
	merge      bool
}

// close removes the scratch index and releases the plan's tables.
func (p *plan) close() {
	for _, free := range p.frees {
		free()
	}
	p.frees, p.act, p.usedBytes = nil, nil, nil
	if p.scratch != nil {
		p.scratch.Close()
	}
}

// planTable makes a zeroed table of n values outside the Go heap, which
// p.close releases.
func planTable[T any](p *plan, n int) ([]T, error) {
	t, free, err := offheap.MakeTable[T](n)
	if err != nil {
		return nil, fmt.Errorf("prune: %w", err)
	}
	p.frees = append(p.frees, free)
	return t, nil
}

// loadIndex reads every index file into the scratch index (r's own stays
// empty: the saver that repacks must not mistake old copies for new
// ones). Every file read is superseded by the merged index, whatever its
// age: under the exclusive lock no writer is still adding to it (see
// doc.go).
func loadIndex(ctx context.Context, r *repo.Repository, files []repo.ObjectEntry, scratch *repo.ScratchIndex) error {
	g, gctx := errgroup.WithContext(ctx)
	// Each file being read is held whole, decrypted and decoded (tens of
	// MB for the 4096-pack files prune writes): a few at a time.
	g.SetLimit(4)
	for _, f := range files {
		g.Go(func() error {
			file, err := r.IndexFile(gctx, f.ID)
			if repo.IsDamage(err) {
				return refuseDamaged([]repo.Damaged{{Key: f.Key, Err: err}}, ErrDamagedIndex)
			}
			if err != nil {
				return damageOr(err, "index file %s", f.ID.Short())
			}
			return scratch.AddFile(f.ID, file)
		})
	}
	return g.Wait()
}

// mark walks every snapshot's trees and marks the blobs they use.
func (p *plan) mark(ctx context.Context, r *repo.Repository, roots []id.ID) error {
	p.used = p.disk.NewSet()
	var err error
	if p.usedBytes, err = planTable[int64](p, p.scratch.PackCount()); err != nil {
		return err
	}
	stack := append([]id.ID(nil), roots...)
	for len(stack) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		tid := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		found, err := p.find([]id.ID{tid})
		if err != nil {
			return err
		}
		if !p.use(tid, found[0]) {
			continue
		}
		t, err := p.loadTree(ctx, r, tid, found[0])
		if err != nil {
			return err
		}
		var content []id.ID
		for _, n := range t.Nodes {
			content = append(content, n.Content...)
		}
		if found, err = p.find(content); err != nil {
			return err
		}
		for i, b := range content {
			p.use(b, found[i])
		}
		for _, n := range t.Nodes {
			if n.Type != tree.TypeDir {
				continue
			}
			seen, err := p.used.Has(n.Subtree)
			if err != nil {
				return fmt.Errorf("prune's index: %w", err)
			}
			if !seen {
				stack = append(stack, n.Subtree)
			}
		}
	}
	return nil
}

// find looks blobs up in the scratch index.
func (p *plan) find(blobs []id.ID) ([]index.Found, error) {
	found, err := p.disk.FindAll(blobs)
	if err != nil {
		return nil, fmt.Errorf("prune's index: %w", err)
	}
	return found, nil
}

// use marks blob, looked up as f, as used and reports whether it was not
// yet: its bytes count for the pack of its canonical copy, and a blob in
// no index or in a pack gone from the store is counted missing.
func (p *plan) use(blob id.ID, f index.Found) bool {
	if !p.used.Mark(blob, f.Record, f.OK) {
		return false
	}
	n := -1
	if f.OK {
		n = p.scratch.PackOf(f.Pack)
	}
	if n < 0 || !p.stored.OnStore(n) {
		if p.missing == 0 {
			p.example = blob
		}
		p.missing++
		return true
	}
	p.usedBytes[n] += int64(f.Entry.Length)
	return true
}

// loadTree reads a tree, looked up as f in the plan's index (the
// repository's is empty), from a pack on the store.
func (p *plan) loadTree(ctx context.Context, r *repo.Repository, tid id.ID, f index.Found) (*tree.Tree, error) {
	if !f.OK || !p.stored.OnStore(p.scratch.PackOf(f.Pack)) {
		return nil, fmt.Errorf("%w: tree %s is in no index", ErrDamaged, tid.Short())
	}
	pid := p.scratch.Listing(f.Pack).ID
	t, err := r.LoadTreeAt(ctx, tid, index.Location{Pack: pid, Entry: f.Entry})
	if err != nil {
		return nil, damageOr(err, "tree %s in pack %s", tid.Short(), pid.Short())
	}
	return t, nil
}

// buildPlan runs the mark phase and decides every pack's fate. The plan
// it returns must be closed.
func buildPlan(ctx context.Context, r *repo.Repository, opts Options, start time.Time) (_ *plan, err error) {
	p := &plan{snapshots: make(map[id.ID]bool), cutoff: start.Add(-opts.Margin), mergeBatch: opts.mergeBatch}
	defer func() {
		if err != nil {
			p.close()
		}
	}()
	snaps, damaged, err := r.Snapshots(ctx)
	if err != nil {
		return nil, fmt.Errorf("loading snapshots: %w", err)
	}
	if len(damaged) > 0 {
		return nil, refuseDamaged(damaged, ErrDamagedSnapshot)
	}
	files, _, err := r.ListObjects(ctx, repo.IndexPrefix)
	if err != nil {
		return nil, fmt.Errorf("listing index files: %w", err)
	}
	p.indexFiles = files
	if p.scratch, err = r.NewScratchIndex(); err != nil {
		return nil, err
	}
	if err := loadIndex(ctx, r, files, p.scratch); err != nil {
		return nil, err
	}
	// Packs are listed after index files: a writer stores a pack before
	// the index file naming it, so every pack an index file we read names
	// is in this listing (if it still exists), and a pack stored since
	// shows up as unindexed, which the margin protects.
	if p.stored, _, err = p.scratch.ListPacks(ctx); err != nil {
		return nil, fmt.Errorf("listing packs: %w", err)
	}
	if p.disk, err = p.scratch.Finish(func(a, b uint32) bool {
		return p.preferred(p.scratch.PackOf(a), p.scratch.PackOf(b))
	}); err != nil {
		return nil, err
	}
	roots := make([]id.ID, 0, len(snaps))
	for _, s := range snaps {
		p.snapshots[s.ID] = true
		roots = append(roots, s.Tree)
	}
	opts.logf("marking: %d snapshots, %d packs, %d index files", len(snaps), p.stored.Stored(), len(files))
	if err := p.mark(ctx, r, roots); err != nil {
		return nil, err
	}
	if err := p.classify(opts.MaxUnused); err != nil {
		return nil, err
	}
	// Merging rewrites every index file (and every host's on-disk index
	// after it): worth it only when a pack is listed twice, or when it
	// leaves fewer files. An index a prune merged is left as it is.
	p.merge = p.scratch.Listings() > p.scratch.PackCount() || p.mergedFiles() < len(p.indexFiles)
	return p, nil
}

// mergedFiles counts the index files writeMergedIndex would write: the
// first listing of each pack kept, in the order EachPack gives them, a
// batch at a time.
func (p *plan) mergedFiles() int {
	var c repo.IndexFileCount
	inCall := 0
	for pos := range uint32(p.scratch.Listings()) {
		if !p.scratch.IsFirst(pos) || !p.keeps(p.scratch.PackOf(pos)) {
			continue
		}
		c.Add(p.scratch.Listing(pos).Blobs)
		if inCall++; inCall == p.mergeBatch {
			c.EndCall()
			inCall = 0
		}
	}
	return c.Files()
}

// preferred orders packs, by number, by which copy of a duplicated blob
// to keep: packs on the store first, newest first (an earlier prune's
// repacked packs), then by id (the order of the numbers).
func (p *plan) preferred(a, b int) bool {
	if oa, ob := p.stored.OnStore(a), p.stored.OnStore(b); oa != ob {
		return oa
	}
	if ta, tb := p.stored.ModTime(a), p.stored.ModTime(b); !ta.Equal(tb) {
		return ta.After(tb)
	}
	return a < b
}

// classify gives each pack an action, and lists the used blobs of the
// packs to repack. It fails when a used blob has no copy in an existing
// pack.
func (p *plan) classify(maxUnused float64) error {
	if p.missing > 0 {
		return fmt.Errorf("%w: %d blobs used by snapshots are in no index or pack (e.g. %s)", ErrDamaged, p.missing, p.example.Short())
	}
	repack := false
	var err error
	if p.act, err = planTable[action](p, p.scratch.PackCount()); err != nil {
		return err
	}
	for n := range p.act {
		l, _ := p.scratch.Pack(n)
		used := p.usedBytes[n]
		switch {
		case !p.stored.OnStore(n):
			p.act[n] = actDelete // stale index entries: dropped from the merged index
		case used == 0:
			p.act[n] = actDelete
		case float64(l.Bytes-used) > maxUnused*float64(l.Bytes):
			p.act[n] = actRepack
			repack = true
		default:
			p.act[n] = actKeep
		}
	}
	for i := range p.stored.UnindexedCount() {
		act := actDelete
		if p.young(p.stored.Unindexed(i).ModTime) {
			act = actProtect
		}
		p.unindexedAct = append(p.unindexedAct, act)
	}
	if !repack {
		return nil
	}
	// Only the packs to repack need their used blobs listed: one pass
	// over the scratch index's file.
	p.repackUsed = make(map[int][]pack.Entry)
	err = p.used.Each(func(rec index.Record) error {
		if n := p.scratch.PackOf(rec.Pack); p.act[n] == actRepack {
			p.repackUsed[n] = append(p.repackUsed[n], rec.Entry)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("prune's index: %w", err)
	}
	return nil
}

// young reports whether an object the store wrote at modTime was stored
// too recently to be judged without an index entry: not before the
// cutoff, or at a time the store does not report (zero).
func (p *plan) young(modTime time.Time) bool {
	return modTime.IsZero() || !modTime.Before(p.cutoff)
}

// damageOr wraps err with ErrDamaged when it says stored bytes are wrong or
// missing, and otherwise reports it as the read failure it is (prune still
// deletes nothing either way).
func damageOr(err error, format string, args ...any) error {
	what := fmt.Sprintf(format, args...)
	if repo.IsDamage(err) || errors.Is(err, repo.ErrNotFound) {
		return fmt.Errorf("%w: %s: %w", ErrDamaged, what, err)
	}
	return fmt.Errorf("reading %s failed, nothing was deleted (run prune again): %w", what, err)
}

// ErrDamaged means the repository is missing or has corrupt objects that
// snapshots need: prune deletes nothing then.
var ErrDamaged = errors.New("repository is damaged: prune deletes nothing (run 'cloudstic check')")

// ErrDamagedSnapshot: a snapshot cannot be read back (repo.IsDamage), so
// prune cannot tell which data it uses; it deletes nothing until the
// damaged snapshot is removed on purpose.
var ErrDamagedSnapshot = errors.New("prune deletes nothing while a snapshot is damaged: run 'cloudstic repair snapshots' first")

// ErrDamagedIndex: an index file cannot be read back (repo.IsDamage). The
// packs only it names would look unused, so prune deletes nothing until
// the index is rebuilt from the packs.
var ErrDamagedIndex = errors.New("prune deletes nothing while an index file is damaged (the packs only it names would look unused): run 'cloudstic repair index' first")

// refuseDamaged is the one-line error naming the first damaged object (and
// how many more there are) with why prune refuses, sentinel.
func refuseDamaged(damaged []repo.Damaged, sentinel error) error {
	more := ""
	if n := len(damaged) - 1; n > 0 {
		more = fmt.Sprintf(" (and %d more)", n)
	}
	return fmt.Errorf("%s is damaged (%s)%s: %w", damaged[0].Key, damaged[0].Reason(), more, sentinel)
}

// ErrConcurrentChange means snapshots appeared while prune ran: another
// process wrote to the repository despite the lock. Nothing was deleted.
var ErrConcurrentChange = errors.New("snapshots changed while prune ran: nothing was deleted (run prune again)")
