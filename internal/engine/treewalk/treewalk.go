package treewalk

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// ErrNotFound means a path names nothing in the snapshot.
var ErrNotFound = errors.New("path not found in snapshot")

// ErrNotDir means a path goes through something that is not a directory.
var ErrNotDir = errors.New("not a directory")

// SkipDir, returned by a Walk callback for a directory, skips its contents.
var SkipDir = errors.New("skip this directory") //nolint:staticcheck // ST1012: named after fs.SkipDir, whose role it plays

// Root returns a directory node standing for a snapshot's root tree, with
// the source directory's own metadata when the snapshot recorded it.
func Root(tid id.ID, meta *tree.Node) tree.Node {
	n := tree.Node{Name: "/", Type: tree.TypeDir, Mode: 0o755}
	if meta != nil {
		n = *meta
		n.Name, n.Type = "/", tree.TypeDir
	}
	n.Subtree = tid
	return n
}

// Lookup resolves a slash-separated path below the root tree tid. An empty
// path, "/" or "." is the root itself, returned as Root(tid, nil).
func Lookup(ctx context.Context, r *repo.Repository, tid id.ID, p string) (tree.Node, error) {
	cur := Root(tid, nil)
	p = strings.Trim(path.Clean("/"+p), "/")
	if p == "" {
		return cur, nil
	}
	parts := strings.Split(p, "/")
	for i, name := range parts {
		if cur.Type != tree.TypeDir {
			return tree.Node{}, fmt.Errorf("%s: %w", strings.Join(parts[:i], "/"), ErrNotDir)
		}
		t, err := r.LoadTree(ctx, cur.Subtree)
		if err != nil {
			return tree.Node{}, err
		}
		n, ok := Child(t, name)
		if !ok {
			return tree.Node{}, fmt.Errorf("%s: %w", strings.Join(parts[:i+1], "/"), ErrNotFound)
		}
		cur = *n
	}
	return cur, nil
}

// Relative turns a path the user gave into a path from the root of
// snapshot s, without leading or trailing "/": a path from the snapshot
// root ("/Documents") stays as it is, an absolute path under the
// snapshot's source directory ("/home/me/Documents" in a backup of
// /home/me) loses the source directory.
func Relative(s *snapshot.Snapshot, p string) string {
	p = path.Clean("/" + p)
	if src := path.Clean("/" + s.Path); s.Path != "" && src != "/" {
		if p == src {
			return ""
		}
		if rest, ok := strings.CutPrefix(p, src+"/"); ok {
			return rest
		}
	}
	return strings.Trim(p, "/")
}

// Child finds the entry called name in t (whose nodes are sorted by name).
func Child(t *tree.Tree, name string) (*tree.Node, bool) {
	lo, hi := 0, len(t.Nodes)
	for lo < hi {
		mid := (lo + hi) / 2
		if t.Nodes[mid].Name < name {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < len(t.Nodes) && t.Nodes[lo].Name == name {
		return &t.Nodes[lo], true
	}
	// Trees written by other programs may not be sorted: fall back to a scan.
	for i := range t.Nodes {
		if t.Nodes[i].Name == name {
			return &t.Nodes[i], true
		}
	}
	return nil, false
}

// Walk calls fn for every entry below the directory tree tid, parents
// before children, in the order the trees store them. Paths are relative
// to the tree, joined to prefix with "/". fn returning SkipDir for a
// directory skips its contents; any other error stops the walk.
func Walk(ctx context.Context, r *repo.Repository, tid id.ID, prefix string, fn func(p string, n *tree.Node) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t, err := r.LoadTree(ctx, tid)
	if err != nil {
		return fmt.Errorf("directory %q: %w", displayDir(prefix), err)
	}
	for i := range t.Nodes {
		n := &t.Nodes[i]
		p := n.Name
		if prefix != "" {
			p = prefix + "/" + n.Name
		}
		err := fn(p, n)
		if errors.Is(err, SkipDir) {
			continue
		}
		if err != nil {
			return err
		}
		if n.Type == tree.TypeDir {
			if err := Walk(ctx, r, n.Subtree, p, fn); err != nil {
				return err
			}
		}
	}
	return nil
}

func displayDir(p string) string {
	if p == "" {
		return "/"
	}
	return p
}
