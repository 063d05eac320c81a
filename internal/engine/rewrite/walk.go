package rewrite

import (
	"context"
	"fmt"

	"github.com/cloudstic/cloudstic/internal/engine/exclude"
	"github.com/cloudstic/cloudstic/internal/engine/treewalk"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// walker rewrites trees, remembering each tree it decided at each path, so
// that the directories several snapshots share are read once.
type walker struct {
	r     *repo.Repository
	wr    *repo.Writer // nil in a dry run
	m     *exclude.Matcher
	saver *repo.Saver // of the snapshot being rewritten; nil in a dry run
	memo  map[memoKey]treeResult
	// bounds measures each snapshot before its walk, which expands a tree
	// once per path that reaches it: a crafted snapshot must fail there,
	// not run for ever (see treewalk.Measurer).
	bounds *treewalk.Measurer
	counts map[id.ID]fileCount // of removed subtrees, by tree
}

// fileCount is the regular files below a tree and their size.
type fileCount struct{ files, bytes int64 }

// memoKey is a tree at a path: the patterns decide by path, so the same
// tree elsewhere may lose other entries.
type memoKey struct {
	tree   id.ID
	prefix string
}

// treeResult is a tree after the rewrite: its id (the old one when nothing
// was removed) and what was removed below it.
type treeResult struct {
	id           id.ID
	removed      []string
	files, bytes int64
}

func newWalker(r *repo.Repository, wr *repo.Writer, m *exclude.Matcher) *walker {
	return &walker{r: r, wr: wr, m: m, memo: map[memoKey]treeResult{},
		bounds: treewalk.NewMeasurer(r), counts: map[id.ID]fileCount{}}
}

// rewrite rewrites one snapshot. It returns nil when the patterns match
// nothing in it.
func (w *walker) rewrite(ctx context.Context, s snapshot.WithID, opts Options) (*Change, error) {
	if _, err := w.bounds.Measure(ctx, s.Tree, ""); err != nil {
		return nil, err
	}
	if w.wr != nil {
		// Tree blobs only: compressed with zstd whatever the setting.
		w.saver = w.wr.NewSaver(ctx, 2, pack.Zstd)
	}
	tr, err := w.tree(ctx, s.Tree, "")
	if err == nil && w.saver != nil {
		// Nothing was saved when nothing changed: Flush then writes nothing.
		err = w.saver.Flush(ctx)
	}
	if err != nil {
		if w.saver != nil {
			w.saver.Abort()
		}
		return nil, err
	}
	if len(tr.removed) == 0 {
		return nil, nil
	}
	c := &Change{Old: s, Removed: tr.removed, RemovedFiles: tr.files, RemovedBytes: tr.bytes}
	if w.wr == nil {
		return c, nil
	}
	if err := w.wr.Lease().Check(ctx); err != nil {
		return c, err
	}
	nid, err := w.wr.SaveSnapshot(ctx, newSnapshot(s, tr.id, c, opts.Excludes))
	if err != nil {
		return c, err
	}
	c.NewID = nid
	if err := w.wr.DeleteSnapshot(ctx, s.ID); err != nil {
		return c, fmt.Errorf("the rewritten snapshot was saved as %s, but the old one is left: %w", nid.Short(), err)
	}
	c.OldDeleted = true
	return c, nil
}

// tree rewrites the tree tid found at prefix ("" at the root, else ending
// in "/").
func (w *walker) tree(ctx context.Context, tid id.ID, prefix string) (treeResult, error) {
	key := memoKey{tid, prefix}
	if v, ok := w.memo[key]; ok {
		return v, nil
	}
	t, err := w.r.LoadTree(ctx, tid)
	if err != nil {
		return treeResult{}, fmt.Errorf("%s: %w", displayPath(prefix), err)
	}
	var out treeResult
	kept := make([]tree.Node, 0, len(t.Nodes))
	for _, n := range t.Nodes {
		rel := prefix + n.Name
		isDir := n.Type == tree.TypeDir
		switch {
		case w.m.Match(rel, isDir) && isDir:
			files, bytes, err := w.count(ctx, n.Subtree)
			if err != nil {
				return treeResult{}, fmt.Errorf("%s: %w", rel, err)
			}
			out.removed = append(out.removed, rel+"/")
			out.files, out.bytes = out.files+files, out.bytes+bytes
			continue
		case w.m.Match(rel, isDir):
			out.removed = append(out.removed, rel)
			if n.Type == tree.TypeFile {
				out.files, out.bytes = out.files+1, out.bytes+int64(n.Size)
			}
			continue
		case isDir:
			sub, err := w.tree(ctx, n.Subtree, rel+"/")
			if err != nil {
				return treeResult{}, err
			}
			n.Subtree = sub.id
			out.removed = append(out.removed, sub.removed...)
			out.files, out.bytes = out.files+sub.files, out.bytes+sub.bytes
		}
		kept = append(kept, n)
	}
	out.id = tid
	if len(out.removed) > 0 {
		if out.id, err = w.store(ctx, kept); err != nil {
			return treeResult{}, err
		}
	}
	w.memo[key] = out
	return out, nil
}

// store encodes a new tree and saves it (not in a dry run); it returns its id.
func (w *walker) store(ctx context.Context, nodes []tree.Node) (id.ID, error) {
	data, err := tree.Encode(&tree.Tree{Nodes: nodes})
	if err != nil {
		return id.ID{}, err
	}
	tid := w.r.Key().ID(data)
	if w.saver != nil {
		if _, err := w.saver.Save(ctx, pack.TreeBlob, tid, data); err != nil {
			return id.ID{}, err
		}
	}
	return tid, nil
}

// count returns the regular files below the tree tid and their sizes,
// each once per path that reaches it. It reads each tree once, and
// recurses no deeper than the measured trees nest (tree.MaxDepth).
func (w *walker) count(ctx context.Context, tid id.ID) (files, bytes int64, err error) {
	if c, ok := w.counts[tid]; ok {
		return c.files, c.bytes, nil
	}
	t, err := w.r.LoadTree(ctx, tid)
	if err != nil {
		return 0, 0, err
	}
	for _, n := range t.Nodes {
		switch n.Type {
		case tree.TypeFile:
			files, bytes = files+1, bytes+int64(n.Size)
		case tree.TypeDir:
			f, b, err := w.count(ctx, n.Subtree)
			if err != nil {
				return 0, 0, err
			}
			files, bytes = files+f, bytes+b
		}
	}
	w.counts[tid] = fileCount{files, bytes}
	return files, bytes, nil
}

// displayPath names a tree's directory in errors.
func displayPath(prefix string) string {
	if prefix == "" {
		return "/"
	}
	return prefix
}
