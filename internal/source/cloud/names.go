package cloud

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/cloudstic/cloudstic/internal/source"
)

// entryNames gives the items of one folder (sorted by id) their names in
// the tree: the drive's name made safe (safeName) with the export
// extension of a document (suffix), and, where several items of a folder
// get the same name (Drive allows it), each of them that name with its id
// inserted before the extension: "report (1AbC).pdf". Every item of such a
// group is renamed, not all but one, so that which one keeps the plain
// name never depends on which was listed first or created later.
func entryNames(items []*source.Item, suffix func(source.Item) string) []string {
	names := make([]string, len(items))
	count := map[string]int{}
	for i, it := range items {
		names[i] = safeName(it.Name) + suffix(*it)
		count[names[i]]++
	}
	taken := map[string]bool{}
	for i, it := range items {
		if count[names[i]] > 1 {
			ext := path.Ext(names[i])
			if ext == names[i] { // ".bashrc": no extension to keep
				ext = ""
			}
			names[i] = strings.TrimSuffix(names[i], ext) + " (" + safeName(it.ID) + ")" + ext
		}
		// Only a name made up to look like another's renamed form can
		// still collide; it gets a counter.
		base := names[i]
		for n := 2; taken[names[i]]; n++ {
			names[i] = fmt.Sprintf("%s~%d", base, n)
		}
		taken[names[i]] = true
	}
	return names
}

// safeName makes a drive's name a valid entry name: "/" and NUL become
// "_" (a drive name may hold them, a path element may not), and an empty
// name, "." and ".." get a leading "_".
func safeName(name string) string {
	name = strings.Map(func(r rune) rune {
		if r == '/' || r == 0 {
			return '_'
		}
		return r
	}, name)
	if name == "" || name == "." || name == ".." {
		name = "_" + name
	}
	return name
}

// sortNodes sorts entries by name, as ReadDir returns them.
func sortNodes(list []*node) {
	slices.SortFunc(list, func(a, b *node) int { return strings.Compare(a.name, b.name) })
}
