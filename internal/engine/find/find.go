package find

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/treewalk"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// ErrBadPattern means a pattern is not a valid glob.
var ErrBadPattern = errors.New("bad pattern")

// Options select what Run reports. Zero values select everything.
type Options struct {
	// Patterns are globs (path.Match syntax). A pattern without "/" is
	// matched against an entry's name; one with "/" against its whole path
	// from the snapshot root, with a leading "/". An entry matches if any
	// pattern does; no patterns match every entry.
	Patterns []string
	// IgnoreCase matches patterns without regard to case.
	IgnoreCase bool
	// PathPrefix limits the search to this directory of each snapshot:
	// a path from the snapshot root ("/Documents"), or an absolute path
	// under the snapshot's source directory ("/home/me/Documents" in a
	// backup of /home/me).
	PathPrefix string
	// Newer and Older bound the modification time (exclusive); zero: no bound.
	Newer, Older time.Time
	// MinSize and MaxSize bound the size in bytes (inclusive); MaxSize
	// counts only when HasMaxSize is set. Only regular files match a size
	// bound.
	MinSize, MaxSize int64
	HasMaxSize       bool
}

// Match is one entry found.
type Match struct {
	Snapshot snapshot.WithID
	// Path is the entry's path from the snapshot root, starting with "/".
	Path string
	Node *tree.Node
}

// CheckPatterns reports the first pattern that is not a valid glob.
func CheckPatterns(patterns []string) error {
	for _, p := range patterns {
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("%w %q: %w", ErrBadPattern, p, err)
		}
	}
	return nil
}

// Run calls fn for every entry of snaps that opts select, snapshot by
// snapshot in the order given, entries in tree order. r's index must be
// loaded. A snapshot whose trees cannot be read, or break the tree bounds
// (see treewalk.Measurer), stops the search with an error naming it.
func Run(ctx context.Context, r *repo.Repository, snaps []snapshot.WithID, opts Options, fn func(Match) error) error {
	_, err := RunStats(ctx, r, snaps, opts, fn)
	return err
}

// Stats count what a search read.
type Stats struct {
	// Entries is the number of entries looked at, matching or not, over
	// all snapshots (an entry shared by two snapshots counts twice).
	Entries int
}

// RunStats is Run, also counting what it read (up to where it stopped).
func RunStats(ctx context.Context, r *repo.Repository, snaps []snapshot.WithID, opts Options, fn func(Match) error) (Stats, error) {
	if err := CheckPatterns(opts.Patterns); err != nil {
		return Stats{}, err
	}
	m := matcher{opts: opts}
	if opts.IgnoreCase {
		m.opts.Patterns = make([]string, len(opts.Patterns))
		for i, p := range opts.Patterns {
			m.opts.Patterns[i] = strings.ToLower(p)
		}
	}
	// One Measurer for all: the trees snapshots share are measured once.
	bounds := treewalk.NewMeasurer(r)
	for _, s := range snaps {
		m.prefix = treewalk.Relative(s.Snapshot, opts.PathPrefix)
		if err := m.search(ctx, r, bounds, s, fn); err != nil {
			return Stats{Entries: m.scanned}, fmt.Errorf("snapshot %s: %w", s.ID.Short(), err)
		}
	}
	return Stats{Entries: m.scanned}, nil
}

type matcher struct {
	opts    Options
	prefix  string // without leading or trailing "/"; "" is the root
	scanned int    // entries report was given
}

// search reports the entries of s that m selects: those at and below its
// prefix, whose trees alone are read. A snapshot without the prefix has
// none.
func (m *matcher) search(ctx context.Context, r *repo.Repository, bounds *treewalk.Measurer, s snapshot.WithID, fn func(Match) error) error {
	start := treewalk.Root(s.Tree, nil)
	if m.prefix != "" {
		n, err := treewalk.Lookup(ctx, r, s.Tree, m.prefix)
		if errors.Is(err, treewalk.ErrNotFound) || errors.Is(err, treewalk.ErrNotDir) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := m.report(s, m.prefix, &n, fn); err != nil {
			return err
		}
		start = n
	}
	if start.Type != tree.TypeDir {
		return nil
	}
	return bounds.Walk(ctx, start.Subtree, m.prefix, func(p string, n *tree.Node) error {
		return m.report(s, p, n, fn)
	})
}

// report calls fn for the entry n at p if m selects it.
func (m *matcher) report(s snapshot.WithID, p string, n *tree.Node, fn func(Match) error) error {
	m.scanned++
	if !m.selects(p, n) {
		return nil
	}
	return fn(Match{Snapshot: s, Path: "/" + p, Node: n})
}

func (m *matcher) selects(p string, n *tree.Node) bool {
	o := &m.opts
	mtime := time.Unix(0, n.MTime)
	if !o.Newer.IsZero() && !mtime.After(o.Newer) {
		return false
	}
	if !o.Older.IsZero() && !mtime.Before(o.Older) {
		return false
	}
	if o.MinSize > 0 || o.HasMaxSize {
		if n.Type != tree.TypeFile || int64(n.Size) < o.MinSize || (o.HasMaxSize && int64(n.Size) > o.MaxSize) {
			return false
		}
	}
	if len(o.Patterns) == 0 {
		return true
	}
	name, full := n.Name, "/"+p
	if o.IgnoreCase {
		name, full = strings.ToLower(name), strings.ToLower(full)
	}
	for _, pat := range o.Patterns {
		subject := name
		if strings.Contains(pat, "/") {
			subject = full
		}
		if ok, _ := path.Match(pat, subject); ok { // validated by CheckPatterns
			return true
		}
	}
	return false
}
