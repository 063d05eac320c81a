package restore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/cloudstic/cloudstic/internal/engine/fsmeta"
)

// deleteExtra removes from each restored directory every entry the
// snapshot does not have there (-delete), so the output matches the
// snapshot. Only directories the walk listed completely are cleaned; the
// rest of the file system, and with -path the rest of the output, are not
// looked at. Leftover temporary files of an interrupted restore go too.
func (d *dirRestore) deleteExtra() error {
	for _, dir := range d.dirs {
		if _, ok := d.unlisted[dir.rel]; ok {
			continue
		}
		names, err := d.w.ReadDirNames(dir.rel)
		if err != nil {
			return fmt.Errorf("-delete: %w", err)
		}
		for _, name := range names {
			rel := childRel(dir.rel, name) // name as it is here: HostRel keeps it
			if _, ok := d.keep[d.keepKey(rel)]; ok {
				continue
			}
			if err := d.ctx.Err(); err != nil {
				return err
			}
			if err := d.w.RemoveAll(rel); err != nil {
				return fmt.Errorf("-delete: %w", err)
			}
			d.count(func(r *Result) { r.Deleted++ })
		}
	}
	return nil
}

// listExtra is deleteExtra for a dry run: it names, in DeletePaths, what
// deleteExtra would remove, by reading the output as it is. Like the
// restore it looks into no directory through a symbolic link, and into
// none the snapshot's listing of could not be read.
func (d *dirRestore) listExtra() error {
	// Output directories that are directories, not links: the output
	// itself (the user may name it through a link) and, for -path, the
	// selected subtree's parents.
	realDirs := map[string]bool{}
	if len(d.dirs) > 0 && d.dirs[0].rel != "." {
		parent := path.Dir(d.dirs[0].rel)
		ok, err := isRealPath(d.opts.Output, parent)
		if err != nil {
			return err
		}
		realDirs[parent] = ok
	}
	for _, dir := range d.dirs {
		if _, ok := d.unlisted[dir.rel]; ok {
			continue
		}
		stat := os.Lstat
		if dir.rel == "." {
			stat = os.Stat
		} else if !realDirs[path.Dir(dir.rel)] {
			continue // its parent is missing or not a directory: nothing below to remove
		}
		ok, err := isRealDir(d.opts.Output, dir.rel, stat)
		if err != nil {
			return err
		}
		if !ok {
			continue // missing, or replaced by the restore with the snapshot's entries below
		}
		realDirs[dir.rel] = true
		full := filepath.Join(d.opts.Output, filepath.FromSlash(fsmeta.HostRel(dir.rel)))
		entries, err := os.ReadDir(full)
		if err != nil {
			return fmt.Errorf("-delete: %w", err)
		}
		for _, e := range entries {
			rel := childRel(dir.rel, e.Name())
			if _, ok := d.keep[d.keepKey(rel)]; !ok {
				d.res.DeletePaths = append(d.res.DeletePaths, rel)
			}
		}
	}
	d.res.Deleted = int64(len(d.res.DeletePaths))
	return nil
}

// isRealDir tells whether rel below output is a directory by stat (Lstat:
// not through a link); a missing one is not.
func isRealDir(output, rel string, stat func(string) (fs.FileInfo, error)) (bool, error) {
	fi, err := stat(filepath.Join(output, filepath.FromSlash(fsmeta.HostRel(rel))))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("-delete: %w", err)
	}
	return fi.IsDir(), nil
}

// isRealPath tells whether the output (by stat: the user may name it
// through a link) and each directory of rel below it (by lstat: not
// through a link) exist and are directories.
func isRealPath(output, rel string) (bool, error) {
	ok, err := isRealDir(output, ".", os.Stat)
	if !ok || err != nil || rel == "." {
		return ok, err
	}
	prefix := ""
	for _, part := range strings.Split(rel, "/") {
		prefix = childRel(prefix, part)
		if ok, err = isRealDir(output, prefix, os.Lstat); !ok || err != nil {
			return ok, err
		}
	}
	return true, nil
}

// childRel is the output-relative path of name in the directory dir ("."
// or "": the output itself).
func childRel(dir, name string) string {
	if dir == "." || dir == "" {
		return name
	}
	return dir + "/" + name
}
