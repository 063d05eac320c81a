package dump

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/cloudstic/cloudstic/internal/engine/treewalk"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// Archive formats.
const (
	FormatTar = "tar"
	FormatZip = "zip"
)

// ErrNotFile means a plain dump was asked of something that is not a
// regular file.
var ErrNotFile = errors.New("not a regular file")

// ErrSizeMismatch means a file's blobs do not add up to its recorded size.
var ErrSizeMismatch = errors.New("file contents do not match the recorded size")

// Contents writes the contents of the regular file n to w, blob by blob.
func Contents(ctx context.Context, r *repo.Repository, n *tree.Node, w io.Writer) error {
	if n.Type != tree.TypeFile {
		return fmt.Errorf("%q is a %s: %w", n.Name, n.Type, ErrNotFile)
	}
	if err := copyContents(ctx, r, n, w); err != nil {
		return fmt.Errorf("%q: %w", n.Name, err)
	}
	return nil
}

// copyContents writes the blobs of the regular file n to w, in order.
func copyContents(ctx context.Context, r *repo.Repository, n *tree.Node, w io.Writer) error {
	dec := r.Codec().NewDecoder() // one blob's buffers, reused for the next
	var written uint64
	for _, b := range n.Content {
		data, err := r.LoadBlobWith(ctx, dec, b)
		if err != nil {
			return err
		}
		if _, err := w.Write(data); err != nil {
			return err
		}
		written += uint64(len(data))
	}
	if written != n.Size {
		return fmt.Errorf("%w (%d bytes stored, %d recorded)", ErrSizeMismatch, written, n.Size)
	}
	return nil
}

// Archive writes the entry at p (a path from the snapshot root; "/" is the
// whole snapshot) and, for a directory, everything below it, as an archive
// of format to w. Names in the archive are paths from the snapshot root
// without the leading "/". root is the snapshot's root node (treewalk.Root).
// A directory whose trees break the tree bounds (see treewalk.Measurer) is
// refused before anything is written.
func Archive(ctx context.Context, r *repo.Repository, root tree.Node, p, format string, w io.Writer) error {
	var aw archiver
	switch format {
	case FormatTar:
		aw = newTarWriter(ctx, r, w)
	case FormatZip:
		aw = newZipWriter(ctx, r, w)
	default:
		return fmt.Errorf("unknown archive format %q (want tar or zip)", format)
	}
	rel := strings.Trim(path.Clean("/"+p), "/")
	start := root
	if rel != "" {
		var err error
		if start, err = treewalk.Lookup(ctx, r, root.Subtree, rel); err != nil {
			return err
		}
	}
	// Trees that break the bounds fail before the first byte is written.
	m := treewalk.NewMeasurer(r)
	if start.Type == tree.TypeDir {
		if _, err := m.Measure(ctx, start.Subtree, rel); err != nil {
			return err
		}
	}
	if rel != "" {
		if err := aw.add(rel, &start); err != nil {
			return err
		}
	}
	if start.Type == tree.TypeDir {
		err := m.Walk(ctx, start.Subtree, rel, func(p string, n *tree.Node) error {
			return aw.add(p, n)
		})
		if err != nil {
			return err
		}
	}
	return aw.close()
}

// archiver adds entries to an archive.
type archiver interface {
	add(name string, n *tree.Node) error
	close() error
}
