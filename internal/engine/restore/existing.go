package restore

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path"

	"github.com/cloudstic/cloudstic/internal/engine/fsmeta"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// action is what a restore does at a path of the snapshot.
type action int

const (
	// actWrite: nothing is there; create the entry, never replacing one
	// that appears meanwhile.
	actWrite action = iota
	// actReplace: an entry is there and -overwrite lets it be replaced.
	actReplace
	// actKeep: the entry there matches the snapshot (-overwrite
	// if-changed); only its metadata is applied.
	actKeep
	// actSkip: leave the entry there alone (reported as skipped).
	actSkip
)

// plan looks at what is at e.rel and decides. It sets e.replace when the
// entry's writer may replace what is there.
func (d *dirRestore) plan(e *entry) (action, error) {
	if d.fresh {
		return actWrite, nil
	}
	ex, err := d.w.Lstat(e.rel)
	if errors.Is(err, fs.ErrNotExist) {
		return actWrite, nil
	}
	if err != nil {
		return actSkip, err
	}
	act := d.decide(e.rel, ex, &e.node)
	switch {
	case act == actSkip:
		// Counted, not warned: over an earlier restore this is every file
		// (Result.Skipped lists them; the front end prints a count).
		d.count(func(r *Result) { r.Skipped = append(r.Skipped, e.rel) })
	case act == actReplace && ex.Type() == tree.TypeDir && e.node.Type != tree.TypeDir:
		// A whole directory tree is removed only when -delete asked for
		// the output to match the snapshot.
		if !d.opts.Delete {
			d.skip(e.rel, "is a directory in the snapshot's way, not replaced (-delete would remove it)")
			return actSkip, nil
		}
		if err := d.w.RemoveAll(e.rel); err != nil {
			return actSkip, err
		}
		d.count(func(r *Result) { r.Replaced++ })
		return actWrite, nil
	case act == actReplace:
		e.replace = true
		d.count(func(r *Result) { r.Replaced++ })
	}
	return act, nil
}

// decide applies the -overwrite mode to the entry ex found at rel.
func (d *dirRestore) decide(rel string, ex *fsmeta.Existing, n *tree.Node) action {
	switch d.opts.Overwrite {
	case OverwriteAlways:
		return actReplace
	case OverwriteIfNewer:
		if n.MTime > ex.MTime {
			return actReplace
		}
	case OverwriteIfChanged:
		if d.matches(rel, ex, n) {
			return actKeep
		}
		return actReplace
	}
	return actSkip
}

// matches says whether the entry ex at rel already is n: a file of the
// same size and modification time (restic's test: contents are not read),
// a symlink to the same target, or a special file of the same kind.
func (d *dirRestore) matches(rel string, ex *fsmeta.Existing, n *tree.Node) bool {
	if ex.Type() != n.Type {
		return false
	}
	switch n.Type {
	case tree.TypeFile:
		return uint64(ex.Size) == n.Size && ex.MTime == n.MTime
	case tree.TypeSymlink:
		target, err := d.w.Readlink(rel)
		return err == nil && target == n.LinkTarget
	}
	return true
}

// unchanged gives an entry that matches the snapshot its metadata.
func (d *dirRestore) unchanged(e entry) {
	if err := d.w.ApplyMeta(e.rel, &e.node); err != nil {
		d.opts.Warnf("%s: %v", e.rel, err)
	}
	d.count(func(r *Result) { r.Unchanged++ })
}

// tempName is a new name in rel's directory for writing rel's entry before
// renaming it into place, so that an interrupted restore never leaves a
// partly written file under a name of the snapshot.
func tempName(rel string) string {
	return childRel(path.Dir(rel), fmt.Sprintf(".cloudstic-restore-%016x.tmp", rand.Uint64()))
}

// viaTemp creates an entry with create at a temporary name and renames it
// to rel, replacing what is there when replace is set.
func (d *dirRestore) viaTemp(rel string, replace bool, create func(tmp string) error) error {
	tmp := tempName(rel)
	if err := create(tmp); err != nil {
		return err
	}
	if err := d.w.Rename(tmp, rel, !replace); err != nil {
		if rerr := d.w.Remove(tmp); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return err
	}
	return nil
}

// other restores a symlink or a special file.
func (d *dirRestore) other(e entry) {
	act, err := d.plan(&e)
	if err != nil {
		d.damaged(e.rel, err)
		return
	}
	switch act {
	case actSkip:
		return
	case actKeep:
		d.unchanged(e)
		return
	}
	create := func(rel string) error {
		if e.node.Type == tree.TypeSymlink {
			return d.w.Symlink(rel, &e.node)
		}
		return d.w.Special(rel, &e.node)
	}
	if e.replace {
		err = d.viaTemp(e.rel, true, create)
	} else {
		err = create(e.rel)
	}
	if errors.Is(err, fsmeta.ErrExists) {
		d.skip(e.rel, "exists, not overwritten")
		return
	}
	if err != nil {
		d.damaged(e.rel, err)
		return
	}
	if err := d.w.ApplyMeta(e.rel, &e.node); err != nil {
		d.opts.Warnf("%s: %v", e.rel, err)
	}
	d.count(func(r *Result) {
		if e.node.Type == tree.TypeSymlink {
			r.Symlinks++
		} else {
			r.Specials++
		}
	})
}

// hardlink makes a later name of a hard-link group a link to the first.
func (d *dirRestore) hardlink(e entry) {
	k, _ := linkKey(&e.node)
	first := d.links[k]
	act := actWrite
	if !d.fresh {
		if linked(d.w, first, e.rel) {
			d.count(func(r *Result) { r.Unchanged++ })
			return
		}
		var err error
		if act, err = d.plan(&e); err != nil {
			d.damaged(e.rel, err)
			return
		}
		if act == actKeep { // same size and time, but not this link
			act, e.replace = actReplace, true
			d.count(func(r *Result) { r.Replaced++ })
		}
	}
	if act == actSkip {
		return
	}
	var err error
	if e.replace {
		err = d.viaTemp(e.rel, true, func(tmp string) error { return d.w.Hardlink(first, tmp) })
	} else {
		err = d.w.Hardlink(first, e.rel)
	}
	if errors.Is(err, fsmeta.ErrExists) {
		d.skip(e.rel, "exists, not overwritten")
		return
	}
	if err != nil {
		// The first name may have been skipped or damaged: restore this
		// one on its own instead.
		d.opts.Warnf("%s: hard link to %s failed (%v); restoring a copy", e.rel, first, err)
		if e.node.Type == tree.TypeFile {
			buf := newWriteBuffers(d.hugePages)
			d.file(e, buf)
			buf.free()
		} else {
			d.other(e)
		}
		return
	}
	d.count(func(r *Result) { r.Hardlinks++ })
}

// linked says whether a and b are the same inode (never where the
// platform does not tell inode numbers: Windows).
func linked(w *fsmeta.Writer, a, b string) bool {
	ea, err := w.Lstat(a)
	if err != nil || ea.Ino == 0 {
		return false
	}
	eb, err := w.Lstat(b)
	return err == nil && ea.Dev == eb.Dev && ea.Ino == eb.Ino
}
