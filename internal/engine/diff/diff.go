package diff

import (
	"context"
	"path"
	"slices"

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
func Trees(ctx context.Context, r *repo.Repository, t1, t2 id.ID, prefix string, emit func(Change)) error {
	if t1 == t2 {
		return nil
	}
	var n1, n2 []tree.Node
	if !t1.IsZero() {
		t, err := r.LoadTree(ctx, t1)
		if err != nil {
			return err
		}
		n1 = t.Nodes
	}
	if !t2.IsZero() {
		t, err := r.LoadTree(ctx, t2)
		if err != nil {
			return err
		}
		n2 = t.Nodes
	}
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
		if err := node(ctx, r, a, b, prefix, emit); err != nil {
			return err
		}
	}
	return nil
}

// node compares one name present in either or both trees.
func node(ctx context.Context, r *repo.Repository, a, b *tree.Node, prefix string, emit func(Change)) error {
	if a != nil && b != nil && a.Type != b.Type {
		// A type change is a removal and an addition.
		if err := node(ctx, r, a, nil, prefix, emit); err != nil {
			return err
		}
		return node(ctx, r, nil, b, prefix, emit)
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
		emit(c)
	}
	if n.Type == tree.TypeDir {
		return Trees(ctx, r, sub1, sub2, p, emit)
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
