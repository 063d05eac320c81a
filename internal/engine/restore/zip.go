package restore

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/klauspost/compress/flate"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// ErrOutputExists means the zip file to write already exists.
var ErrOutputExists = errors.New("output file already exists")

// restoreZip writes the selected entries into a new zip file at Output.
// The file gets that name only when the restore succeeded: one that fails
// (a damaged file included) or is interrupted leaves nothing there.
func restoreZip(ctx context.Context, r *repo.Repository, start entry, _ string, opts Options) (*Result, error) {
	sel, err := newSelection(opts)
	if err != nil {
		return nil, err
	}
	res := &Result{}
	out := io.Discard // an io.Writer; the output file replaces it
	var zo *zipOutput
	if !opts.DryRun {
		if zo, err = createZipOutput(opts); err != nil {
			return nil, err
		}
		out = zo.f
	}
	zw := zip.NewWriter(out)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(w, flate.BestSpeed)
	})
	err = walk(ctx, r, start, func(e entry) error {
		if e.rel == "." {
			return nil
		}
		ok, parents, err := sel.visit(e)
		if err != nil || !ok {
			return err
		}
		for _, p := range parents {
			if err := zipEntry(ctx, r, zw, p, res, opts); err != nil {
				return err
			}
		}
		return zipEntry(ctx, r, zw, e, res, opts)
	}, func(rel string, err error) {
		opts.Warnf("%s: not restored: %v", rel, err)
		res.Damaged = append(res.Damaged, rel)
	}, nil) // a zip file holds any name
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = context.Cause(ctx) // interrupted between entries
	}
	if err == nil && len(res.Damaged) > 0 {
		err = fmt.Errorf("%w: %d damaged", ErrDamaged, len(res.Damaged))
	}
	if zo == nil {
		return res, err
	}
	if err != nil {
		// A zip missing files, or cut short, would still open and look
		// whole.
		if derr := zo.discard(); derr != nil {
			opts.Warnf("could not remove the incomplete zip file: %v", derr)
		}
		return res, err
	}
	return res, zo.commit(opts.Output)
}

func zipEntry(ctx context.Context, r *repo.Repository, zw *zip.Writer, e entry, res *Result, opts Options) error {
	n := &e.node
	hdr := &zip.FileHeader{Name: e.rel, Modified: time.Unix(0, n.MTime)}
	mode := fs.FileMode(n.Mode & 0o777)
	switch n.Type {
	case tree.TypeDir:
		hdr.Name += "/"
		hdr.SetMode(mode | fs.ModeDir)
		res.Dirs++
		_, err := zw.CreateHeader(hdr)
		return err
	case tree.TypeSymlink:
		hdr.SetMode(mode | fs.ModeSymlink)
		w, err := zw.CreateHeader(hdr)
		if err != nil {
			return err
		}
		res.Symlinks++
		_, err = io.WriteString(w, n.LinkTarget)
		return err
	case tree.TypeFile:
	default:
		opts.Warnf("%s: %s entries cannot be stored in a zip file; skipped", e.rel, n.Type)
		return nil
	}
	// Check the data first: a zip entry cannot be taken back once begun.
	for _, b := range n.Content {
		known, err := r.Index().Contains(ctx, b)
		if err != nil {
			return err // the local index, not the repository (see dirRestore)
		}
		if !known {
			opts.Warnf("%s: not restored: blob %s missing from the index", e.rel, b.Short())
			res.Damaged = append(res.Damaged, e.rel)
			return nil
		}
	}
	hdr.Method = zip.Deflate
	hdr.SetMode(mode)
	w, err := zw.CreateHeader(hdr)
	if err != nil {
		return err
	}
	dec := r.Codec().NewDecoder()
	for _, b := range n.Content {
		data, err := r.LoadBlobWith(ctx, dec, b)
		if ctx.Err() != nil {
			return ctx.Err() // interrupted, not damaged
		}
		if err != nil {
			// The entry is already begun: the restore reports the file,
			// goes on to find any other damage, and writes no zip file.
			opts.Warnf("%s: not restored: %v", e.rel, err)
			res.Damaged = append(res.Damaged, e.rel)
			return nil
		}
		if _, err := w.Write(data); err != nil {
			return err
		}
		res.Bytes += int64(len(data))
		if p := opts.Progress; p != nil {
			p.Bytes.Add(int64(len(data)))
		}
	}
	res.Files++
	return nil
}
