package restore

import "fmt"

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
			rel := name
			if dir.rel != "." {
				rel = dir.rel + "/" + name
			}
			if _, ok := d.keep[rel]; ok {
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
