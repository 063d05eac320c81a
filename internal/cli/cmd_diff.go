package cli

import (
	"context"
	"fmt"
	"path"
	"slices"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// Change kinds of diff.
const (
	changeAdded    = "added"    // "+"
	changeRemoved  = "removed"  // "-"
	changeModified = "modified" // "M": content, type or link target changed
	changeMetadata = "metadata" // "U": only mode, owner or times changed
)

// diffChange is one line of `diff`.
type diffChange struct {
	Path       string    `json:"path"`
	Change     string    `json:"change"`
	Type       tree.Type `json:"type"`
	SizeBefore uint64    `json:"size_before"`
	SizeAfter  uint64    `json:"size_after"`
}

// diffSummary totals a diff; bytes count regular files only.
type diffSummary struct {
	Added        int   `json:"added"`
	Removed      int   `json:"removed"`
	Modified     int   `json:"modified"`
	Metadata     int   `json:"metadata"`
	BytesAdded   int64 `json:"bytes_added"`
	BytesRemoved int64 `json:"bytes_removed"`
}

func runDiff(ctx context.Context, a *app, args []string) error {
	fs := a.flags()
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 1 || len(pos) > 2 {
		return usageErr("give one or two snapshots: diff SNAP1 [SNAP2|latest] (one snapshot is compared with its parent)")
	}
	r, err := a.openRepo(ctx)
	if err != nil {
		return err
	}
	defer a.closeStore()
	snaps, err := indexedSnapshots(ctx, r.Repository)
	if err != nil {
		return err
	}
	s1, s2, err := diffSnapshots(snaps, pos)
	if err != nil {
		return err
	}
	var changes []diffChange
	if err := diffTrees(ctx, r.Repository, s1.Tree, s2.Tree, "", func(c diffChange) { changes = append(changes, c) }); err != nil {
		return err
	}
	sum := summarize(changes)
	if a.g.json {
		a.writeJSON(diffResult{Snapshot1: s1.ID.String(), Snapshot2: s2.ID.String(),
			Changes: nonNilChanges(changes), Summary: sum})
		return nil
	}
	marks := map[string]string{changeAdded: "+", changeRemoved: "-", changeModified: "M", changeMetadata: "U"}
	for _, c := range changes {
		name := c.Path
		if c.Type == tree.TypeDir {
			name += "/"
		}
		fmt.Fprintf(a.io.Stdout, "%s  %s\n", marks[c.Change], name)
	}
	if !a.g.quiet {
		fmt.Fprintf(a.io.Stdout, "\n%s -> %s: %d added, %d removed, %d modified, %d metadata only; +%s -%s\n",
			s1.ID.String()[:8], s2.ID.String()[:8], sum.Added, sum.Removed, sum.Modified, sum.Metadata,
			humanBytes(sum.BytesAdded), humanBytes(sum.BytesRemoved))
	}
	return nil
}

// diffSnapshots resolves the command's arguments: two snapshots, or one
// and its parent.
func diffSnapshots(snaps []snapshot.WithID, args []string) (snapshot.WithID, snapshot.WithID, error) {
	s1, err := repo.FindSnapshot(snaps, args[0], nil)
	if err != nil {
		return s1, s1, err
	}
	if len(args) == 2 {
		s2, err := repo.FindSnapshot(snaps, args[1], nil)
		return s1, s2, err
	}
	if s1.Parent.IsZero() {
		return s1, s1, usageErr("snapshot %s has no parent: give a second snapshot to compare with", s1.ID.String()[:8])
	}
	for _, s := range snaps {
		if s.ID == s1.Parent {
			return s, s1, nil
		}
	}
	return s1, s1, fmt.Errorf("the parent %s of snapshot %s no longer exists: give a second snapshot to compare with",
		s1.Parent.String()[:8], s1.ID.String()[:8])
}

// diffTrees reports the differences between two trees, in path order,
// skipping identical subtrees without loading them.
func diffTrees(ctx context.Context, r *repo.Repository, t1, t2 id.ID, prefix string, emit func(diffChange)) error {
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
		if err := diffNode(ctx, r, a, b, prefix, emit); err != nil {
			return err
		}
	}
	return nil
}

// diffNode compares one name present in either or both trees.
func diffNode(ctx context.Context, r *repo.Repository, a, b *tree.Node, prefix string, emit func(diffChange)) error {
	if a != nil && b != nil && a.Type != b.Type {
		// A type change is a removal and an addition.
		if err := diffNode(ctx, r, a, nil, prefix, emit); err != nil {
			return err
		}
		return diffNode(ctx, r, nil, b, prefix, emit)
	}
	n := b
	if n == nil {
		n = a
	}
	p := path.Join(prefix, n.Name)
	c := diffChange{Path: p, Type: n.Type}
	var sub1, sub2 id.ID
	switch {
	case a == nil:
		c.Change, c.SizeAfter, sub2 = changeAdded, b.Size, b.Subtree
	case b == nil:
		c.Change, c.SizeBefore, sub1 = changeRemoved, a.Size, a.Subtree
	default:
		c.SizeBefore, c.SizeAfter, sub1, sub2 = a.Size, b.Size, a.Subtree, b.Subtree
		switch {
		case a.Size != b.Size || a.LinkTarget != b.LinkTarget || a.Rdev != b.Rdev || !slices.Equal(a.Content, b.Content):
			c.Change = changeModified
		case a.Mode != b.Mode || a.UID != b.UID || a.GID != b.GID || (a.MTime != b.MTime && n.Type != tree.TypeDir):
			c.Change = changeMetadata
		}
	}
	if c.Change != "" {
		emit(c)
	}
	if n.Type == tree.TypeDir {
		return diffTrees(ctx, r, sub1, sub2, p, emit)
	}
	return nil
}

func summarize(changes []diffChange) diffSummary {
	var s diffSummary
	for _, c := range changes {
		switch c.Change {
		case changeAdded:
			s.Added++
		case changeRemoved:
			s.Removed++
		case changeModified:
			s.Modified++
		case changeMetadata:
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

func nonNilChanges(c []diffChange) []diffChange {
	if c == nil {
		return []diffChange{}
	}
	return c
}
