package backup

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cloudstic/cloudstic/internal/engine/treewalk"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
	"github.com/cloudstic/cloudstic/internal/source"
)

// scan is what the walk needs of a directory before it can go through its
// entries: the parent snapshot's tree of it and its own entries. Scans of
// the next few subdirectories are made ahead on other goroutines (see
// subdirs); done is closed when the fields are set.
type scan struct {
	parentList []tree.Node
	parent     map[string]*tree.Node
	nodes      []tree.Node
	empty      map[string]bool // subdirectories kept empty (see readDir)
	err        error
	done       chan struct{}
}

// dirLookahead is how many subdirectories ahead of the walk are scanned.
const dirLookahead = 8

// fillScan loads a directory's parent tree, reads the directory into s and
// closes s.done. A directory at depth tree.MaxDepth is stored empty, with
// an error naming it: readers refuse deeper entries, so a snapshot holding
// them could not be listed or restored (and the walk recurses once per
// level).
func (w *walker) fillScan(s *scan, path, rel string, parentTree id.ID) {
	defer close(s.done)
	if relDepth(rel) >= tree.MaxDepth {
		w.entryErr(fmt.Errorf("%s: %w: its contents are left out", treewalk.ShortPath(path), tree.ErrTooDeep))
		return
	}
	s.parentList, s.parent = w.parentNodes(parentTree, rel)
	if names, ok := w.selected[path]; ok {
		s.nodes = w.readSelected(path, names, s.parent)
		return
	}
	s.nodes, s.empty, s.err = w.readDir(path, rel, s.parent)
}

// relDepth is the number of components of rel, a path relative to the
// source ("." for the source itself: 0).
func relDepth(rel string) int {
	if rel == "." {
		return 0
	}
	return strings.Count(rel, "/") + 1
}

// dir stores one directory and everything below it. pre is its scan when
// one was started ahead, nil otherwise.
func (w *walker) dir(path, rel string, parentTree id.ID, pre *scan) (id.ID, error) {
	if err := w.ctx.Err(); err != nil {
		return id.ID{}, context.Cause(w.ctx)
	}
	if pre == nil {
		pre = &scan{done: make(chan struct{})}
		w.fillScan(pre, path, rel, parentTree)
	}
	<-pre.done
	parentList, parent, nodes, empty := pre.parentList, pre.parent, pre.nodes, pre.empty
	if pre.err != nil {
		return id.ID{}, pre.err
	}
	// Hand every changed file to the workers first, then descend, so file
	// reads overlap with the walk of subdirectories.
	pending, err := w.submitFiles(path, rel, nodes, parent)
	if err != nil {
		return id.ID{}, err
	}
	if err := w.subdirs(path, rel, nodes, parent, empty); err != nil {
		return id.ID{}, err
	}
	failed := map[*tree.Node]bool{}
	for _, job := range pending {
		if err := <-job.done; err != nil {
			if w.ctx.Err() != nil {
				return id.ID{}, context.Cause(w.ctx)
			}
			if errors.Is(err, source.ErrLost) {
				w.fail(err)
				return id.ID{}, err
			}
			w.errs.add(err)
			failed[job.node] = true
			continue
		}
		w.countRead(job)
	}
	w.countRemoved(parent, nodes)
	// A directory whose every entry equals the parent snapshot's has the
	// parent's tree: encoding and hashing it again was a tenth of a
	// no-change backup's CPU (tree.Node.Equal means equal encodings). The
	// parent's tree must still be in the index.
	if len(failed) == 0 && parentList != nil &&
		slices.EqualFunc(nodes, parentList, func(a, b tree.Node) bool { return a.Equal(&b) }) && w.sink.Known(parentTree) {
		return parentTree, nil
	}
	return w.saveTree(nodes, failed)
}

// subdirs stores every subdirectory, one after the other, and records its
// tree id in its node. Loading and decoding the parent snapshot's trees and
// reading directories were most of a no-change backup's time, on one core:
// the scans of the next dirLookahead subdirectories are made ahead on other
// goroutines while a slot is free (dirSlots). The directories themselves
// are still walked in order, so that the files of one directory are read,
// and packed, together (a restore reads them in that order). Every scan
// started is waited for, even after an error. The subdirectories named in
// empty are stored without their entries, unread.
func (w *walker) subdirs(path, rel string, nodes []tree.Node, parent map[string]*tree.Node, empty map[string]bool) error {
	var dirs []*tree.Node
	for i := range nodes {
		if nodes[i].Type == tree.TypeDir {
			dirs = append(dirs, &nodes[i])
		}
	}
	oldSub := func(n *tree.Node) id.ID {
		if old := parent[n.Name]; old != nil && old.Type == tree.TypeDir {
			return old.Subtree
		}
		return id.ID{}
	}
	if len(empty) > 0 {
		dirs = slices.DeleteFunc(dirs, func(n *tree.Node) bool { return empty[n.Name] })
		if err := w.emptyDirs(nodes, empty, oldSub); err != nil {
			return err
		}
	}
	scans := make([]*scan, len(dirs))
	defer func() {
		for _, s := range scans {
			if s != nil {
				<-s.done
			}
		}
	}()
	next := 0 // the next subdirectory whose scan may be started ahead
	for i, n := range dirs {
		for next = max(next, i+1); next < len(dirs) && next <= i+dirLookahead; next++ {
			if !w.takeDirSlot() {
				break // all busy: try again at the next subdirectory
			}
			s, d := &scan{done: make(chan struct{})}, dirs[next]
			scans[next] = s
			go func() {
				defer func() { <-w.dirSlots }()
				w.fillScan(s, filepath.Join(path, d.Name), relPath(rel, d.Name), oldSub(d))
			}()
		}
		if err := w.subdir(n, filepath.Join(path, n.Name), relPath(rel, n.Name), oldSub(n), scans[i]); err != nil {
			return err
		}
	}
	return nil
}

// emptyDirs stores the subdirectories named in empty with no entries.
func (w *walker) emptyDirs(nodes []tree.Node, empty map[string]bool, oldSub func(*tree.Node) id.ID) error {
	for i := range nodes {
		if n := &nodes[i]; n.Type == tree.TypeDir && empty[n.Name] {
			sub, err := w.saveTree(nil, nil)
			if err != nil {
				return err
			}
			n.Subtree = sub
			w.countDir(oldSub(n), sub)
		}
	}
	return nil
}

// takeDirSlot takes a slot for a scan ahead if one is free.
func (w *walker) takeDirSlot() bool {
	select {
	case w.dirSlots <- struct{}{}:
		return true
	default:
		return false
	}
}

// subdir stores one subdirectory and records its tree id in n.
func (w *walker) subdir(n *tree.Node, path, rel string, oldSub id.ID, pre *scan) error {
	sub, err := w.dir(path, rel, oldSub, pre)
	if err != nil {
		return err
	}
	n.Subtree = sub
	w.countDir(oldSub, sub)
	return nil
}

// countDir counts a subdirectory stored as tree sub, whose tree in the
// parent snapshot was oldSub.
func (w *walker) countDir(oldSub, sub id.ID) {
	switch {
	case oldSub.IsZero():
		w.n.dirsNew.Add(1)
	case oldSub == sub:
		w.n.dirsUnmodified.Add(1)
	default:
		w.n.dirsChanged.Add(1)
	}
}
