package cloud

import (
	"io/fs"
	"path"
	"time"

	"github.com/cloudstic/cloudstic/internal/source"
)

// node is one entry of the tree a scan built.
type node struct {
	item   source.Item
	name   string
	path   string
	kids   []*node // sorted by name
	link   bool
	target string // a shortcut's link target
}

// build makes the tree below root from m: every item reachable from the
// root through folders, each once (a folder met again, through a drive's
// multiple parents or a loop a hostile service made up, is left out).
// Shortcuts become symbolic links to the target's path in the tree when
// it is there, else to "id:<target id>".
func build(m *Model, root source.Item, p Provider) map[string]*node {
	kids := m.children()
	rn := &node{item: root, name: "/", path: "/"}
	nodes := map[string]*node{"/": rn}
	pathOf := map[string]string{root.ID: "/"}
	seen := map[string]bool{root.ID: true}
	var links []*node
	queue := []*node{rn}
	for len(queue) > 0 {
		dir := queue[0]
		queue = queue[1:]
		var list []*source.Item
		for _, it := range kids[dir.item.ID] {
			if !seen[it.ID] {
				list = append(list, it)
			}
		}
		names := entryNames(list, p.Suffix)
		for i, it := range list {
			seen[it.ID] = true
			n := &node{item: *it, name: names[i], path: path.Join(dir.path, names[i]), link: IsShortcut(*it)}
			dir.kids = append(dir.kids, n)
			nodes[n.path] = n
			pathOf[it.ID] = n.path
			if n.link {
				links = append(links, n)
			}
			if it.Dir {
				queue = append(queue, n)
			}
		}
		sortNodes(dir.kids)
	}
	for _, l := range links {
		if tp, ok := pathOf[l.item.Target]; ok {
			l.target = relTarget(l.path, tp)
		} else {
			l.target = "id:" + l.item.Target
		}
	}
	return nodes
}

// info describes n as the walk sees it: a folder is a directory (0755), a
// shortcut a symbolic link, anything else a file (0644), with the drive's
// record of it in its Stat.
func (n *node) info(p Provider) fs.FileInfo {
	st := &source.Stat{Mode: 0o644, MTime: n.item.MTime,
		Drive: &source.DriveRecord{ID: n.item.ID, Hash: n.item.Hash, MIME: n.item.MIME, Target: n.item.Target}}
	mode := fs.FileMode(0o644)
	switch {
	case n.item.Dir:
		st.Mode, mode = 0o755, fs.ModeDir|0o755
	case n.link:
		st.Mode, mode = 0o777, fs.ModeSymlink|0o777
	}
	if n.path != "/" && n.name != n.item.Name {
		st.Drive.Name = n.item.Name
	}
	size := n.item.Size
	if n.item.Dir || n.link {
		size = 0
	}
	return &fileInfo{name: path.Base(n.path), size: size, mode: mode, mtime: time.Unix(0, n.item.MTime), st: st}
}

// fileInfo is an fs.FileInfo of the tree.
type fileInfo struct {
	name  string
	size  int64
	mode  fs.FileMode
	mtime time.Time
	st    *source.Stat
}

func (fi *fileInfo) Name() string       { return fi.name }
func (fi *fileInfo) Size() int64        { return fi.size }
func (fi *fileInfo) Mode() fs.FileMode  { return fi.mode }
func (fi *fileInfo) ModTime() time.Time { return fi.mtime }
func (fi *fileInfo) IsDir() bool        { return fi.mode.IsDir() }
func (fi *fileInfo) Sys() any           { return fi.st }
