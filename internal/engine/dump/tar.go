package dump

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// tarWriter writes PAX tar archives: nanosecond times, long and non-ASCII
// names, and extended attributes survive.
type tarWriter struct {
	ctx   context.Context
	r     *repo.Repository
	tw    *tar.Writer
	links map[[2]uint64]string // device+inode → first name written
}

func newTarWriter(ctx context.Context, r *repo.Repository, w io.Writer) *tarWriter {
	return &tarWriter{ctx: ctx, r: r, tw: tar.NewWriter(w), links: map[[2]uint64]string{}}
}

func (t *tarWriter) add(name string, n *tree.Node) error {
	hdr := &tar.Header{
		Name: name, Mode: int64(n.Mode & 0o7777), Uid: int(n.UID), Gid: int(n.GID), Uname: n.User, Gname: n.Group,
		ModTime: time.Unix(0, n.MTime), Format: tar.FormatPAX,
	}
	if n.CTime != 0 {
		hdr.ChangeTime = time.Unix(0, n.CTime)
	}
	for _, x := range n.Xattrs {
		if hdr.PAXRecords == nil {
			hdr.PAXRecords = map[string]string{}
		}
		hdr.PAXRecords["SCHILY.xattr."+x.Name] = string(x.Value)
	}
	switch n.Type {
	case tree.TypeDir:
		hdr.Typeflag, hdr.Name = tar.TypeDir, name+"/"
	case tree.TypeSymlink:
		hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, n.LinkTarget
	case tree.TypeFIFO:
		hdr.Typeflag = tar.TypeFifo
	case tree.TypeCharDev, tree.TypeBlkDev:
		hdr.Typeflag = tar.TypeChar
		if n.Type == tree.TypeBlkDev {
			hdr.Typeflag = tar.TypeBlock
		}
		hdr.Devmajor, hdr.Devminor = devNumbers(n.Rdev)
	case tree.TypeSocket:
		return nil // tar has no sockets (GNU tar skips them too)
	case tree.TypeFile:
		if key, ok := linkKey(n); ok {
			if first, seen := t.links[key]; seen {
				hdr.Typeflag, hdr.Linkname = tar.TypeLink, first
				return t.tw.WriteHeader(hdr)
			}
			t.links[key] = name
		}
		hdr.Typeflag, hdr.Size = tar.TypeReg, int64(n.Size)
		if err := t.tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := copyContents(t.ctx, t.r, n, t.tw); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
	return t.tw.WriteHeader(hdr)
}

func (t *tarWriter) close() error { return t.tw.Close() }

// linkKey identifies the members of a hard-link group.
func linkKey(n *tree.Node) ([2]uint64, bool) {
	if n.Links < 2 || n.Inode == 0 {
		return [2]uint64{}, false
	}
	return [2]uint64{n.Device, n.Inode}, true
}
