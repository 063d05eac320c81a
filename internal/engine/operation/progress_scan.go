package operation

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/exclude"
	"github.com/cloudstic/cloudstic/internal/source/local"
)

// scanTotals counts the regular files and bytes below a backup source.
type scanTotals struct {
	files, bytes atomic.Int64
	complete     atomic.Bool
}

// scan walks the source of opts with lstat only, leaving out what the
// backup leaves out (the same exclude.Filter), until done or stop is
// closed. Errors are ignored: the backup reports them. Only a local
// source of one directory is scanned: listing a remote tree twice would
// cost the backup more than the totals are worth.
func (t *scanTotals) scan(opts *backup.Options, stop <-chan struct{}) {
	if opts.Stream != nil {
		return // a stream's length is not known ahead
	}
	if _, isLocal := opts.Source.(local.Source); (opts.Source != nil && !isLocal) || len(opts.Paths) > 0 {
		return
	}
	root, err := filepath.Abs(opts.Path)
	if err != nil {
		return
	}
	if root, err = filepath.EvalSymlinks(root); err != nil { // the backup follows a source given as a link
		return
	}
	fi, err := os.Lstat(root)
	if err != nil {
		return
	}
	filter, err := exclude.NewFilter(opts.ExcludeRules(), local.New(), fi)
	if err != nil {
		return
	}
	stopped := false
	//nolint:errcheck // errors end or skip the count only; the backup itself reports unreadable entries
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		select {
		case <-stop:
			stopped = true
			return filepath.SkipAll
		default:
		}
		if err != nil || p == root {
			return nil
		}
		rel, _ := filepath.Rel(root, p) // p is below root
		dec, info, err := filter.Entry(context.Background(), filepath.Dir(p), filepath.ToSlash(rel), d)
		switch {
		case err != nil || dec == exclude.Skip:
			if d.IsDir() {
				return filepath.SkipDir
			}
		case dec == exclude.KeepEmpty:
			return filepath.SkipDir
		case d.Type().IsRegular():
			t.files.Add(1)
			t.bytes.Add(info.Size())
		}
		return nil
	})
	// A scan stopped halfway has no totals: partial ones would show as
	// the whole.
	t.complete.Store(!stopped)
}
