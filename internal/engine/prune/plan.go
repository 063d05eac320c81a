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
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// action is what prune does with one pack.
type action int

const (
	actKeep    action = iota // used enough: stays as it is
	actProtect               // in no index and too new to judge (see Options.Margin)
	actDelete                // nothing used in it
	actRepack                // used blobs copied out, then deleted
)

// packState is everything prune knows of one pack. Its blobs are in
// plan.index, not here: a list per pack would hold every entry twice.
type packState struct {
	id        id.ID
	obj       repo.ObjectEntry // valid when onStore
	onStore   bool
	indexed   bool         // some index file names it
	used      []pack.Entry // canonical copies of used blobs, for packs to repack
	usedBytes int64
	blobBytes int64
	act       action
}

// plan is the outcome of the mark phase.
type plan struct {
	snapshots  map[id.ID]bool
	index      *index.Index // every index file read, preferring packs to keep
	used       *index.Set
	packs      map[id.ID]*packState
	indexFiles []repo.ObjectEntry
	cutoff     time.Time
}

// loadIndex reads every index file into a new index (r's own stays empty:
// the saver that repacks must not mistake old copies for new ones). Every
// file read is superseded by the merged index, whatever its age: under the
// exclusive lock no writer is still adding to it (see doc.go).
func loadIndex(ctx context.Context, r *repo.Repository, files []repo.ObjectEntry) (*index.Index, error) {
	idx := index.New()
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
			for _, pb := range file.Packs {
				idx.Add(pb.ID, pb.Blobs)
			}
			return nil
		})
	}
	return idx, g.Wait()
}

// mark walks every snapshot's trees and returns the set of used blobs.
func (p *plan) mark(ctx context.Context, r *repo.Repository, roots []id.ID) (*index.Set, error) {
	used := p.index.NewSet()
	stack := append([]id.ID(nil), roots...)
	for len(stack) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		tid := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !used.Add(tid) {
			continue
		}
		t, err := p.loadTree(ctx, r, tid)
		if err != nil {
			return nil, err
		}
		for _, n := range t.Nodes {
			for _, b := range n.Content {
				used.Add(b)
			}
			if n.Type == tree.TypeDir && !used.Has(n.Subtree) {
				stack = append(stack, n.Subtree)
			}
		}
	}
	return used, nil
}

// loadTree reads a tree through the plan's index (the repository's is
// empty), from a pack on the store.
func (p *plan) loadTree(ctx context.Context, r *repo.Repository, tid id.ID) (*tree.Tree, error) {
	loc, ok := p.index.Lookup(tid)
	if !ok || !p.packs[loc.Pack].onStore {
		return nil, fmt.Errorf("%w: tree %s is in no index", ErrDamaged, tid.Short())
	}
	t, err := r.LoadTreeAt(ctx, tid, loc)
	if err != nil {
		return nil, damageOr(err, "tree %s in pack %s", tid.Short(), loc.Pack.Short())
	}
	return t, nil
}

// buildPlan runs the mark phase and decides every pack's fate.
func buildPlan(ctx context.Context, r *repo.Repository, opts Options, start time.Time) (*plan, error) {
	p := &plan{snapshots: make(map[id.ID]bool), packs: make(map[id.ID]*packState), cutoff: start.Add(-opts.Margin)}
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
	if p.index, err = loadIndex(ctx, r, files); err != nil {
		return nil, err
	}
	// Packs are listed after index files: a writer stores a pack before
	// the index file naming it, so every pack an index file we read names
	// is in this listing (if it still exists), and a pack stored since
	// shows up as unindexed, which the margin protects.
	objs, _, err := r.ListObjects(ctx, repo.DataPrefix)
	if err != nil {
		return nil, fmt.Errorf("listing packs: %w", err)
	}
	for _, o := range objs {
		p.packs[o.ID] = &packState{id: o.ID, obj: o, onStore: true}
	}
	for _, pid := range p.index.Packs() {
		ps := p.packs[pid]
		if ps == nil {
			ps = &packState{id: pid}
			p.packs[pid] = ps
		}
		ps.indexed = true
	}
	p.index.Prefer(p.preferred)
	roots := make([]id.ID, 0, len(snaps))
	for _, s := range snaps {
		p.snapshots[s.ID] = true
		roots = append(roots, s.Tree)
	}
	opts.logf("marking: %d snapshots, %d packs, %d index files", len(snaps), len(objs), len(files))
	if p.used, err = p.mark(ctx, r, roots); err != nil {
		return nil, err
	}
	return p, p.classify(opts.MaxUnused)
}

// preferred orders packs by which copy of a duplicated blob to keep:
// packs on the store first, newest first (an earlier prune's repacked
// packs), then by id.
func (p *plan) preferred(a, b id.ID) bool {
	pa, pb := p.packs[a], p.packs[b]
	if pa.onStore != pb.onStore {
		return pa.onStore
	}
	if ta, tb := pa.obj.ModTime, pb.obj.ModTime; !ta.Equal(tb) {
		return ta.After(tb)
	}
	return string(a[:]) < string(b[:])
}

// classify assigns each used blob to its canonical pack and each pack an
// action. It fails when a used blob has no copy in an existing pack.
func (p *plan) classify(maxUnused float64) error {
	missing := p.used.Unknown()
	p.used.EachLocation(func(loc index.Location) {
		ps := p.packs[loc.Pack]
		if !ps.onStore {
			missing = append(missing, loc.ID)
			return
		}
		ps.usedBytes += int64(loc.Length)
	})
	if len(missing) > 0 {
		return fmt.Errorf("%w: %d blobs used by snapshots are in no index or pack (e.g. %s)", ErrDamaged, len(missing), missing[0].Short())
	}
	repack := false
	for _, ps := range p.packs {
		for _, e := range p.index.PackEntries(ps.id) {
			ps.blobBytes += int64(e.Length)
		}
		switch {
		case !ps.onStore:
			ps.act = actDelete // stale index entries: dropped from the merged index
		case !ps.indexed && p.young(ps.obj):
			ps.act = actProtect
		case ps.usedBytes == 0:
			ps.act = actDelete
		case float64(ps.blobBytes-ps.usedBytes) > maxUnused*float64(ps.blobBytes):
			ps.act = actRepack
			repack = true
		default:
			ps.act = actKeep
		}
	}
	if repack {
		// Only the packs to repack need their used blobs listed.
		p.used.EachLocation(func(loc index.Location) {
			if ps := p.packs[loc.Pack]; ps.act == actRepack {
				ps.used = append(ps.used, loc.Entry)
			}
		})
	}
	return nil
}

// young reports whether an object was stored too recently to be judged
// without an index entry: not before the cutoff, or at a time the store
// does not report.
func (p *plan) young(o repo.ObjectEntry) bool {
	return o.ModTime.IsZero() || !o.ModTime.Before(p.cutoff)
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
