package dump

import (
	"archive/zip"
	"context"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// zipWriter writes zip archives. Zip keeps modes, times and symlinks (as
// Info-ZIP does), but not owners, hard links or special files: hard links
// become copies, special files are skipped.
type zipWriter struct {
	ctx context.Context
	r   *repo.Repository
	zw  *zip.Writer
}

func newZipWriter(ctx context.Context, r *repo.Repository, w io.Writer) *zipWriter {
	return &zipWriter{ctx: ctx, r: r, zw: zip.NewWriter(w)}
}

func (z *zipWriter) add(name string, n *tree.Node) error {
	hdr := &zip.FileHeader{Name: name, Modified: time.Unix(0, n.MTime)}
	mode := fs.FileMode(n.Mode & 0o777)
	switch n.Type {
	case tree.TypeDir:
		hdr.Name += "/"
		hdr.SetMode(mode | fs.ModeDir)
		_, err := z.zw.CreateHeader(hdr)
		return err
	case tree.TypeSymlink:
		hdr.SetMode(mode | fs.ModeSymlink)
		w, err := z.zw.CreateHeader(hdr)
		if err != nil {
			return err
		}
		_, err = io.WriteString(w, n.LinkTarget)
		return err
	case tree.TypeFile:
		hdr.SetMode(mode)
		hdr.Method = zip.Deflate
		w, err := z.zw.CreateHeader(hdr)
		if err != nil {
			return err
		}
		if err := copyContents(z.ctx, z.r, n, w); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
	return nil // zip has no fifos, devices or sockets
}

func (z *zipWriter) close() error { return z.zw.Close() }
