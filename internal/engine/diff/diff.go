package diff

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"

	"github.com/cloudstic/cloudstic/internal/engine/treewalk"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// Change kinds.
const (
	Added    = "added"    // "+"
	Removed  = "removed"  // "-"
	Modified = "modified" // "M": content, type or link target changed
	Metadata = "metadata" // "U": only mode, owner or times changed
)

// Change is one path that differs between the two trees.
type Change struct {
	Path       string    `json:"path"`
	Change     string    `json:"change"`
	Type       tree.Type `json:"type"`
	SizeBefore uint64    `json:"size_before"`
	SizeAfter  uint64    `json:"size_after"`
}

// Summary totals a diff; bytes count regular files only.
type Summary struct {
	Added        int   `json:"added"`
	Removed      int   `json:"removed"`
	Modified     int   `json:"modified"`
	Metadata     int   `json:"metadata"`
	BytesAdded   int64 `json:"bytes_added"`
	BytesRemoved int64 `json:"bytes_removed"`
}

// Trees reports the differences between the trees t1 and t2 (either may
// be zero: an empty tree) in path order, below prefix, skipping identical
// subtrees without loading them. r's index must be loaded.
//
// The comparison is measured first (see measure): one whose trees nest
// deeper than tree.MaxDepth, or that would meet more than tree.MaxEntries
// entries, fails before anything is emitted.
func Trees(ctx context.Context, r *repo.Repository, t1, t2 id.ID, prefix string, emit func(Change)) error {
	d := &differ{m: treewalk.NewMeasurer(r), costs: map[[2]id.ID]int64{}, emit: emit}
	if _, err := d.measure(ctx, t1, t2, prefix, treewalk.Depth(prefix)); err != nil {
		return err
	}
	return d.trees(ctx, t1, t2, prefix, treewalk.Depth(prefix))
}

// differ is the state of one comparison.
type differ struct {
	m     *treewalk.Measurer // reads the trees; measures one-sided subtrees
	costs map[[2]id.ID]int64 // entries met comparing two trees, measured
	emit  func(Change)
}

// load returns the nodes of the tree tid, none for the zero id.
func (d *differ) load(ctx context.Context, tid id.ID) ([]tree.Node, error) {
	if tid.IsZero() {
		return nil, nil
	}
	t, err := d.m.LoadTree(ctx, tid)
	if err != nil {
		return nil, err
	}
	return t.Nodes, nil
}

// pairs calls fn for each name of n1 and n2 (sorted by name), with its
// node on either side or both.
func pairs(n1, n2 []tree.Node, fn func(a, b *tree.Node) error) error {
	i, j := 0, 0
	for i < len(n1) || j < len(n2) {
		var a, b *tree.Node
		switch {
		case j >= len(n2) || (i < len(n1) && n1[i].Name < n2[j].Name):
			a = &n1[i]
			i++
		case i >= len(n1) || n2[j].Name < n1[i].Name:
			b = &n2[j]
			j++
		default:
			a, b = &n1[i], &n2[j]
			i++
			j++
		}
		if err := fn(a, b); err != nil {
			return err
		}
	}
	return nil
}

// measure returns how many entries comparing t1 and t2, directories at
// depth found at prefix, meets: each pair of trees is read once, however
// many directories share it, and a subtree on one side only is measured by
// the Measurer. It fails as the tree bounds say.
func (d *differ) measure(ctx context.Context, t1, t2 id.ID, prefix string, depth int) (int64, error) {
	if t1 == t2 {
		return 0, nil
	}
	if c, ok := d.costs[[2]id.ID{t1, t2}]; ok {
		return c, nil
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	n1, err := d.load(ctx, t1)
	if err != nil {
		return 0, err
	}
	n2, err := d.load(ctx, t2)
	if err != nil {
		return 0, err
	}
	var cost int64
	err = pairs(n1, n2, func(a, b *tree.Node) error {
		n := b
		if n == nil {
			n = a
		}
		p := path.Join(prefix, n.Name)
		if depth+1 > tree.MaxDepth {
			return fmt.Errorf("%s: %w", treewalk.ShortPath(p), tree.ErrTooDeep)
		}
		cost++
		var sub int64
		var err error
		switch {
		case a != nil && b != nil && a.Type == tree.TypeDir && b.Type == tree.TypeDir:
			sub, err = d.measure(ctx, a.Subtree, b.Subtree, p, depth+1)
		default:
			// A directory on one side only (or replacing a non-directory)
			// is listed whole.
			for _, side := range []*tree.Node{a, b} {
				if side != nil && side.Type == tree.TypeDir && err == nil {
					var s treewalk.Size
					s, err = d.m.Measure(ctx, side.Subtree, p)
					sub += s.Entries
					if errors.Is(err, tree.ErrTooManyEntries) {
						err = tree.ErrTooManyEntries // the comparison's budget, not the subtree's
					}
				}
			}
		}
		cost += sub
		if err == nil && cost > tree.MaxEntries {
			err = tree.ErrTooManyEntries
		}
		return err
	})
	if err != nil {
		return 0, err
	}
	d.costs[[2]id.ID{t1, t2}] = cost
	return cost, nil
}

// trees emits the differences between t1 and t2, directories at depth.
func (d *differ) trees(ctx context.Context, t1, t2 id.ID, prefix string, depth int) error {
	if t1 == t2 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	n1, err := d.load(ctx, t1)
	if err != nil {
		return err
	}
	n2, err := d.load(ctx, t2)
	if err != nil {
		return err
	}
	if depth >= tree.MaxDepth && len(n1)+len(n2) > 0 {
		// measure saw to it; this keeps the recursion bounded regardless.
		return fmt.Errorf("%s: %w", treewalk.ShortPath(prefix), tree.ErrTooDeep)
	}
	return pairs(n1, n2, func(a, b *tree.Node) error { return d.node(ctx, a, b, prefix, depth) })
}

// node compares one name present in either or both trees.
func (d *differ) node(ctx context.Context, a, b *tree.Node, prefix string, depth int) error {
	if a != nil && b != nil && a.Type != b.Type {
		// A type change is a removal and an addition.
		if err := d.node(ctx, a, nil, prefix, depth); err != nil {
			return err
		}
		return d.node(ctx, nil, b, prefix, depth)
	}
	n := b
	if n == nil {
		n = a
	}
	p := path.Join(prefix, n.Name)
	c := Change{Path: p, Type: n.Type}
	var sub1, sub2 id.ID
	switch {
	case a == nil:
		c.Change, c.SizeAfter, sub2 = Added, b.Size, b.Subtree
	case b == nil:
		c.Change, c.SizeBefore, sub1 = Removed, a.Size, a.Subtree
	default:
		c.SizeBefore, c.SizeAfter, sub1, sub2 = a.Size, b.Size, a.Subtree, b.Subtree
		switch {
		case a.Size != b.Size || a.LinkTarget != b.LinkTarget || a.Rdev != b.Rdev || !slices.Equal(a.Content, b.Content):
			c.Change = Modified
		case a.Mode != b.Mode || a.UID != b.UID || a.GID != b.GID || (a.MTime != b.MTime && n.Type != tree.TypeDir):
			c.Change = Metadata
		}
	}
	if c.Change != "" {
		d.emit(c)
	}
	if n.Type == tree.TypeDir {
		return d.trees(ctx, sub1, sub2, p, depth+1)
	}
	return nil
}

// Summarize totals changes.
func Summarize(changes []Change) Summary {
	var s Summary
	for _, c := range changes {
		switch c.Change {
		case Added:
			s.Added++
		case Removed:
			s.Removed++
		case Modified:
			s.Modified++
		case Metadata:
			s.Metadata++
		}
		if c.Type == tree.TypeFile {
			if c.SizeAfter > c.SizeBefore {
				s.BytesAdded += int64(c.SizeAfter - c.SizeBefore)
			} else {
				s.BytesRemoved += int64(c.SizeBefore - c.SizeAfter)
			}
		}
	}
	return s
}
