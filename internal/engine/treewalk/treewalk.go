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
// path, "/" or "." is the root itself, returned as Root(tid, nil). A path
// of more than tree.MaxDepth components is refused (tree.ErrTooDeep).
func Lookup(ctx context.Context, r *repo.Repository, tid id.ID, p string) (tree.Node, error) {
	cur := Root(tid, nil)
	p = strings.Trim(path.Clean("/"+p), "/")
	if p == "" {
		return cur, nil
	}
	if Depth(p) > tree.MaxDepth {
		return tree.Node{}, fmt.Errorf("%s: %w", ShortPath(p), tree.ErrTooDeep)
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
//
// The trees are measured first (see Measurer): a walk that would go
// deeper than tree.MaxDepth or meet more than tree.MaxEntries entries
// fails before fn is called.
func Walk(ctx context.Context, r *repo.Repository, tid id.ID, prefix string, fn func(p string, n *tree.Node) error) error {
	return NewMeasurer(r).Walk(ctx, tid, prefix, fn)
}

// Walk is the package's Walk, measuring with m: trees m measured before
// are not read again to measure them.
func (m *Measurer) Walk(ctx context.Context, tid id.ID, prefix string, fn func(p string, n *tree.Node) error) error {
	if _, err := m.Measure(ctx, tid, prefix); err != nil {
		return err
	}
	return walk(ctx, m, tid, prefix, fn)
}

// walkFrame is a directory being walked: its entries before next are done.
type walkFrame struct {
	nodes   []tree.Node
	next    int
	pathLen int // length of the path buffer before this directory's entries
}

// walk is Walk after the measuring, reading trees through m. It keeps an explicit stack (no
// recursion on the goroutine's stack) and one path buffer, so that what it
// holds grows with the depth, not with the depth's square. It checks the
// bounds as it goes, should the trees have changed since they were
// measured (a tree that could not be read then).
func walk(ctx context.Context, m *Measurer, tid id.ID, prefix string, fn func(p string, n *tree.Node) error) error {
	t, err := m.LoadTree(ctx, tid)
	if err != nil {
		return fmt.Errorf("directory %q: %w", displayDir(prefix), err)
	}
	base := Depth(prefix)
	path := []byte(prefix)
	stack := []walkFrame{{nodes: t.Nodes, pathLen: len(path)}}
	var entries int64
	for len(stack) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		f := &stack[len(stack)-1]
		if f.next == len(f.nodes) {
			stack = stack[:len(stack)-1]
			continue
		}
		n := &f.nodes[f.next]
		f.next++
		path = appendName(path[:f.pathLen], n.Name)
		if base+len(stack) > tree.MaxDepth {
			return fmt.Errorf("%s: %w", ShortPath(string(path)), tree.ErrTooDeep)
		}
		if entries++; entries > tree.MaxEntries {
			return tooMany(prefix)
		}
		p := string(path)
		err := fn(p, n)
		if errors.Is(err, SkipDir) {
			continue
		}
		if err != nil {
			return err
		}
		if n.Type != tree.TypeDir {
			continue
		}
		sub, err := m.LoadTree(ctx, n.Subtree)
		if err != nil {
			return fmt.Errorf("directory %q: %w", displayDir(p), err)
		}
		stack = append(stack, walkFrame{nodes: sub.Nodes, pathLen: len(path)})
	}
	return nil
}

func displayDir(p string) string {
	if p == "" {
		return "/"
	}
	return p
}
