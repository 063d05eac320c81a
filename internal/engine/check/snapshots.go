package check

import (
	"context"
	"errors"
	"fmt"

	"github.com/cloudstic/cloudstic/internal/engine/treewalk"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/index"
	"github.com/cloudstic/cloudstic/internal/repo/offheap"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// walkItem is a tree still to visit.
type walkItem struct {
	tree id.ID
	dir  *treewalk.Path
	snap string // snapshot key, for messages
}

// missingPack aggregates the referenced blobs of a pack that is gone.
type missingPack struct {
	blobs   int
	example string
}

// walker walks snapshot trees once each.
type walker struct {
	c       *checker
	seen    *index.DiskSet
	missing map[id.ID]*missingPack
	// used counts the blobs seen, and their bytes, by the pack table
	// position of their canonical entry (for noteUnused).
	used []packUse
}

// packUse counts the blobs of a pack some snapshot uses.
type packUse struct {
	blobs uint32
	bytes uint64
}

// checkSnapshots loads the snapshots and walks their trees.
func (c *checker) checkSnapshots(ctx context.Context) error {
	snaps, err := c.loadSnapshots(ctx)
	if err != nil {
		return err
	}
	// Outside the Go heap, as the scratch index's tables: 16 bytes for
	// each of millions of packs.
	used, free, err := offheap.MakeTable[packUse](c.scratch.PackCount())
	if err != nil {
		return fmt.Errorf("check: %w", err)
	}
	defer free()
	w := &walker{c: c, seen: c.disk.NewSet(), missing: make(map[id.ID]*missingPack), used: used}
	// The walk visits each tree once, whatever the snapshot's shape; the
	// Measurer (each tree once too, across snapshots) tells whether the
	// readers, which expand them, would accept them.
	bounds := treewalk.NewMeasurer(c.r)
	bounds.SkipUnreadable = true // the walk reports those
	for i, s := range snaps {
		if err := w.walk(ctx, s); err != nil {
			return err
		}
		if _, err := bounds.Measure(ctx, s.Tree, ""); treewalk.IsBounds(err) {
			c.add(KindCorrupt, repo.SnapshotKey(s.ID), "%v (ls, find, dump and restore refuse it)", err)
		} else if err != nil {
			return err
		}
		c.logf("checked snapshot %s (%d/%d)", s.ID.Short(), i+1, len(snaps))
	}
	for pid, m := range w.missing {
		c.add(KindMissing, repo.DescribePack(pid), "pack does not exist; %d referenced blobs were in it (e.g. %s)", m.blobs, m.example)
	}
	for n := range c.scratch.PackCount() {
		if pid := c.stored.ID(n); !c.stored.OnStore(n) && w.missing[pid] == nil {
			// An error even when no snapshot needs it: a backup could
			// deduplicate against these entries and lose data.
			c.add(KindMissing, repo.DescribePack(pid), "the index names this pack but it does not exist (no checked snapshot needs its blobs; prune drops the entries)")
		}
	}
	c.res.Blobs = w.seen.Len()
	if c.opts.Snapshot == "" {
		c.noteUnused(w.used)
	}
	return nil
}

// loadSnapshots loads every snapshot (reporting the unreadable ones) or
// the one Options.Snapshot names.
func (c *checker) loadSnapshots(ctx context.Context) ([]snapshot.WithID, error) {
	for _, k := range c.badSnapshots {
		c.add(KindNote, k, "not a snapshot name; ignored")
	}
	var out []snapshot.WithID
	for _, sid := range c.snapshots {
		s, err := c.r.LoadSnapshot(ctx, sid)
		switch {
		case errors.Is(err, repo.ErrNotFound):
			continue // forgotten while check ran
		case err != nil:
			c.addLoadErr(repo.SnapshotKey(sid), err, repairSnapshotsHint)
			continue
		}
		out = append(out, snapshot.WithID{ID: sid, Snapshot: s})
	}
	snapshot.SortByTime(out)
	if c.opts.Snapshot != "" {
		s, err := repo.FindSnapshot(out, c.opts.Snapshot, nil)
		if err != nil {
			return nil, err
		}
		out = []snapshot.WithID{s}
	}
	c.res.Snapshots = len(out)
	return out, nil
}

// find looks blobs up in the scratch index. A failure to read it fails
// the check.
func (w *walker) find(blobs []id.ID) ([]index.Found, error) {
	found, err := w.c.disk.FindAll(blobs)
	if err != nil {
		return nil, fmt.Errorf("check's index: %w", err)
	}
	return found, nil
}

// mark adds blob, looked up as l, to the blobs seen and reports whether
// it was new, counting it for its pack when the index has it.
func (w *walker) mark(blob id.ID, l index.Found) bool {
	if !w.seen.Mark(blob, l.Record, l.OK) {
		return false
	}
	if l.OK {
		u := &w.used[w.c.scratch.PackOf(l.Pack)]
		u.blobs++
		u.bytes += uint64(l.Entry.Length)
	}
	return true
}

// locate reports a blob that cannot be found (found: whether the index
// has it, at rec), returning false then. The blob is the entry name of
// dir ("": dir's own tree).
func (w *walker) locate(blob id.ID, rec index.Record, found bool, what string, dir *treewalk.Path, name, snapKey string) bool {
	if !found {
		w.c.add(KindMissing, snapKey, "%s %s (%s) is in no index", what, blob.Short(), "/"+dir.Join(name))
		return false
	}
	pid := w.c.scratch.Listing(rec.Pack).ID
	if !w.c.stored.OnStore(w.c.scratch.PackOf(rec.Pack)) {
		m := w.missing[pid]
		if m == nil {
			m = &missingPack{example: fmt.Sprintf("%s %s of %s in %s", what, blob.Short(), "/"+dir.Join(name), snapKey)}
			w.missing[pid] = m
		}
		m.blobs++
		return false
	}
	return !w.c.isDamaged(pid) // damaged packs are already reported
}

func (w *walker) walk(ctx context.Context, s snapshot.WithID) error {
	snapKey := repo.SnapshotKey(s.ID)
	stack := []walkItem{{tree: s.Tree, snap: snapKey}}
	for len(stack) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		l, err := w.find([]id.ID{it.tree})
		if err != nil {
			return err
		}
		if !w.mark(it.tree, l[0]) {
			continue
		}
		w.c.res.Trees++
		if !w.locate(it.tree, l[0].Record, l[0].OK, "tree", it.dir, "", it.snap) {
			continue
		}
		t, err := w.c.r.LoadTree(ctx, it.tree)
		if err != nil {
			pid := w.c.scratch.Listing(l[0].Pack).ID
			w.c.addErr(repo.DescribePack(pid), err, "tree %s (%s): %v", it.tree.Short(), "/"+it.dir.Join(""), err)
			continue
		}
		var content []id.ID
		for _, n := range t.Nodes {
			content = append(content, n.Content...)
		}
		found, err := w.find(content)
		if err != nil {
			return err
		}
		for _, n := range t.Nodes {
			for _, b := range n.Content {
				if w.mark(b, found[0]) {
					w.locate(b, found[0].Record, found[0].OK, "data blob", it.dir, n.Name, it.snap)
				}
				found = found[1:]
			}
			if n.Type != tree.TypeDir {
				continue
			}
			seen, err := w.seen.Has(n.Subtree)
			if err != nil {
				return fmt.Errorf("check's index: %w", err)
			}
			if !seen {
				stack = append(stack, walkItem{tree: n.Subtree, dir: it.dir.Child(n.Name), snap: it.snap})
			}
		}
	}
	return nil
}
