package treewalk

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// Size is what a walk of a directory's tree meets below it.
type Size struct {
	// Entries counts the entries below the directory, each once per path
	// that reaches it (a tree shared by two directories counts twice),
	// up to tree.MaxEntries+1: "more than the limit".
	Entries int64
	// Height is how many levels of entries are below the directory: 0
	// for an empty one, 1 when it holds no non-empty subdirectory.
	Height int
}

// Measurer measures trees against tree.MaxDepth and tree.MaxEntries
// before a walk expands them. It reads each tree once, however many
// directories share it, and remembers the sizes of the trees it measured
// for later calls: measuring several snapshots with one Measurer reads
// the trees they share once. A Measurer is not safe for concurrent use.
type Measurer struct {
	r     *repo.Repository
	sizes map[id.ID]Size
	// kept are the first trees read, up to keepNodes entries, for the
	// walk that follows (LoadTree): a small snapshot's trees are then
	// read once, not twice.
	kept      map[id.ID]*tree.Tree
	keptNodes int

	// SkipUnreadable counts a tree that cannot be read as empty instead
	// of failing: for callers whose walk reports such trees itself and
	// goes on (restore, check).
	SkipUnreadable bool
	// Unlimited measures trees expanding beyond tree.MaxEntries instead
	// of refusing them (stats counts them; their Entries say "more").
	// The depth bound holds all the same.
	Unlimited bool
	// OnTree, when set, is called once for every tree the Measurer
	// reads, after every tree below it.
	OnTree func(tid id.ID, t *tree.Tree) error
}

// NewMeasurer returns a Measurer reading r's trees; r's index must be
// loaded.
func NewMeasurer(r *repo.Repository) *Measurer {
	return &Measurer{r: r, sizes: map[id.ID]Size{}, kept: map[id.ID]*tree.Tree{}}
}

// keepNodes bounds the entries of the trees a Measurer keeps (a few
// hundred bytes each once decoded).
const keepNodes = 1 << 15

// LoadTree returns the tree tid, from those the Measurer kept when it
// can, and keeps it while there is room. The tree is shared: it must not
// be modified.
func (m *Measurer) LoadTree(ctx context.Context, tid id.ID) (*tree.Tree, error) {
	if t, ok := m.kept[tid]; ok {
		return t, nil
	}
	t, err := m.r.LoadTree(ctx, tid)
	if err == nil && m.keptNodes+len(t.Nodes) <= keepNodes {
		m.kept[tid] = t
		m.keptNodes += len(t.Nodes)
	}
	return t, err
}

// frame is a tree being measured: its entries up to next are counted.
type frame struct {
	tid     id.ID
	nodes   []tree.Node
	next    int
	size    Size
	pathLen int // length of the path buffer before this tree's name
}

// Measure returns the size of the directory tree tid, found at prefix (a
// path from the snapshot root without leading or trailing "/"; "" for the
// root). A walk from there must not go deeper than tree.MaxDepth
// (tree.ErrTooDeep, naming the path where it would) nor meet more than
// tree.MaxEntries entries (tree.ErrTooManyEntries). The trees are read
// with an explicit stack: no recursion on the goroutine's stack.
func (m *Measurer) Measure(ctx context.Context, tid id.ID, prefix string) (Size, error) {
	if s, ok := m.sizes[tid]; ok {
		return s, m.within(prefix, Depth(prefix), s)
	}
	path := []byte(prefix)
	base := Depth(prefix)
	t, err := m.load(ctx, tid, prefix)
	if err != nil || t == nil {
		return Size{}, err
	}
	stack := []*frame{{tid: tid, nodes: t.Nodes, pathLen: len(path)}}
	for {
		if err := ctx.Err(); err != nil {
			return Size{}, err
		}
		f := stack[len(stack)-1]
		depth := base + len(stack) // of f's entries
		if f.next == len(f.nodes) {
			if m.OnTree != nil {
				if err := m.OnTree(f.tid, &tree.Tree{Nodes: f.nodes}); err != nil {
					return Size{}, err
				}
			}
			m.sizes[f.tid] = f.size
			stack = stack[:len(stack)-1]
			path = path[:f.pathLen]
			if len(stack) == 0 {
				return f.size, nil
			}
			if err := m.count(stack[len(stack)-1], f.size, prefix); err != nil {
				return Size{}, err
			}
			continue
		}
		n := &f.nodes[f.next]
		f.next++
		if depth > tree.MaxDepth {
			return Size{}, fmt.Errorf("%s: %w", ShortPath(string(appendName(path, n.Name))), tree.ErrTooDeep)
		}
		if err := m.count(f, Size{Entries: 1}, prefix); err != nil {
			return Size{}, err
		}
		if n.Type != tree.TypeDir {
			continue
		}
		if s, ok := m.sizes[n.Subtree]; ok {
			if err := m.within(string(appendName(path, n.Name)), depth, s); err != nil {
				return Size{}, err
			}
			if err := m.count(f, s, prefix); err != nil {
				return Size{}, err
			}
			continue
		}
		pathLen := len(path)
		path = appendName(path, n.Name)
		sub, err := m.load(ctx, n.Subtree, string(path))
		if err != nil {
			return Size{}, err
		}
		if sub == nil {
			path = path[:pathLen]
			continue
		}
		stack = append(stack, &frame{tid: n.Subtree, nodes: sub.Nodes, pathLen: pathLen})
	}
}

// count adds to f's size what one of its entries holds: s is the size of
// a subdirectory's tree, or {Entries: 1} for the entry itself (counted
// when met: every entry is one level of f).
func (m *Measurer) count(f *frame, s Size, prefix string) error {
	f.size.Entries += s.Entries
	f.size.Height = max(f.size.Height, 1+s.Height)
	if f.size.Entries > tree.MaxEntries {
		f.size.Entries = tree.MaxEntries + 1
		if !m.Unlimited {
			return tooMany(prefix)
		}
	}
	return nil
}

// within checks a directory at depth (path components) whose tree has
// size s against the bounds.
func (m *Measurer) within(p string, depth int, s Size) error {
	if depth+s.Height > tree.MaxDepth {
		return fmt.Errorf("%s: %w", ShortPath(p), tree.ErrTooDeep)
	}
	if s.Entries > tree.MaxEntries && !m.Unlimited {
		return tooMany("")
	}
	return nil
}

// load reads the tree of the directory at p: nil, nil when it cannot be
// read and the Measurer skips such trees.
func (m *Measurer) load(ctx context.Context, tid id.ID, p string) (*tree.Tree, error) {
	t, err := m.LoadTree(ctx, tid)
	switch {
	case err == nil:
		return t, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case m.SkipUnreadable:
		return nil, nil
	}
	return nil, fmt.Errorf("directory %q: %w", displayDir(p), err)
}

func tooMany(prefix string) error {
	if prefix == "" {
		return tree.ErrTooManyEntries
	}
	return fmt.Errorf("%s: %w", ShortPath(prefix), tree.ErrTooManyEntries)
}

// IsBounds reports whether err is a breach of the tree bounds.
func IsBounds(err error) bool {
	return errors.Is(err, tree.ErrTooDeep) || errors.Is(err, tree.ErrTooManyEntries)
}

// Depth is the number of components of p, a path from the snapshot root
// without leading or trailing "/" ("" is the root: 0).
func Depth(p string) int {
	if p == "" {
		return 0
	}
	return strings.Count(p, "/") + 1
}

// appendName appends "/name" (or name, to an empty path) to path.
func appendName(path []byte, name string) []byte {
	if len(path) > 0 {
		path = append(path, '/')
	}
	return append(path, name...)
}

// shortPathMax is the longest path ShortPath leaves whole.
const shortPathMax = 200

// ShortPath abbreviates a path for an error message: a path at the depth
// limit may be a megabyte long. It keeps the beginning and the end.
func ShortPath(p string) string {
	if len(p) <= shortPathMax {
		return p
	}
	head, tail := shortPathMax/2, len(p)-shortPathMax/2
	for head > 0 && !utf8.RuneStart(p[head]) {
		head--
	}
	for tail < len(p) && !utf8.RuneStart(p[tail]) {
		tail++
	}
	return fmt.Sprintf("%s…(%d levels)…%s", p[:head], Depth(p), p[tail:])
}
