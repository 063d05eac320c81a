package treewalk

import (
	"slices"
	"strings"
)

// Path is a directory's path from the snapshot root as a chain of names,
// made into a string only for a message. A walk that keeps one for each
// directory pending then holds one name per directory, not a path as long
// as its depth (a crafted snapshot nests directories a hundred thousand
// levels deep). The nil *Path is the root.
type Path struct {
	parent *Path
	name   string
	depth  int
}

// Child returns the path of the entry name of p.
func (p *Path) Child(name string) *Path { return &Path{parent: p, name: name, depth: p.Depth() + 1} }

// Depth is the number of components of p (0 for the root).
func (p *Path) Depth() int {
	if p == nil {
		return 0
	}
	return p.depth
}

// Join returns the path of the entry name of p ("" names p itself), without
// leading "/", abbreviated by ShortPath.
func (p *Path) Join(name string) string {
	var names []string
	if name != "" {
		names = append(names, name)
	}
	for ; p != nil; p = p.parent {
		names = append(names, p.name)
	}
	slices.Reverse(names)
	return ShortPath(strings.Join(names, "/"))
}
