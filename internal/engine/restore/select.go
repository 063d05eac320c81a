package restore

import (
	"fmt"
	"strings"

	"github.com/cloudstic/cloudstic/internal/engine/exclude"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// selection decides which entries of the walk a restore writes
// (-include, -exclude). It follows the walk, which visits parents before
// children, depth first, on one goroutine.
type selection struct {
	include, exclude *exclude.Matcher
	// included are the directories on the walk's current path that an
	// include pattern matched: everything below them is restored.
	included []string
	// pending are the directories on the walk's current path not written
	// yet: with -include a directory is written only once something in it
	// is, so that a restore of "*.pdf" does not recreate every directory.
	pending []entry
}

// newSelection parses the patterns of opts; a nil matcher selects all.
func newSelection(opts Options) (*selection, error) {
	s := &selection{}
	var err error
	if len(opts.Include) > 0 {
		if s.include, err = matcher("-include", opts.Include); err != nil {
			return nil, err
		}
	}
	if len(opts.Exclude) > 0 {
		if s.exclude, err = matcher("-exclude", opts.Exclude); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func matcher(flag string, patterns []string) (*exclude.Matcher, error) {
	for _, p := range patterns {
		if err := exclude.ParsePattern(p); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrBadOptions, flag, err)
		}
	}
	m, err := exclude.NewMatcher(patterns)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrBadOptions, flag, err)
	}
	return m, nil
}

// visit decides for e, the walk's next entry below its start. ok says
// whether to restore e; parents are the directories leading to e that must
// be written first (oldest first). An excluded directory returns
// errSkipDir: nothing below it is even listed.
func (s *selection) visit(e entry) (ok bool, parents []entry, err error) {
	isDir := e.node.Type == tree.TypeDir
	s.included = popNonAncestors(s.included, e.rel, func(p string) string { return p })
	s.pending = popNonAncestors(s.pending, e.rel, func(p entry) string { return p.rel })
	if s.exclude != nil && s.exclude.Match(e.rel, isDir) {
		if isDir {
			return false, nil, errSkipDir
		}
		return false, nil, nil
	}
	if s.include != nil && len(s.included) == 0 {
		if !s.include.Match(e.rel, isDir) {
			if isDir {
				s.pending = append(s.pending, e) // written if something below is
			}
			return false, nil, nil
		}
		if isDir {
			s.included = append(s.included, e.rel)
		}
	}
	parents, s.pending = s.pending, nil
	return true, parents, nil
}

// popNonAncestors drops from the end of stack the paths that are not
// parents of rel: the walk has left them.
func popNonAncestors[T any](stack []T, rel string, path func(T) string) []T {
	for len(stack) > 0 && !strings.HasPrefix(rel, path(stack[len(stack)-1])+"/") {
		stack = stack[:len(stack)-1]
	}
	return stack
}
