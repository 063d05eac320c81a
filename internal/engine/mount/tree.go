//go:build !windows

package mount

import (
	"context"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/cloudstic/cloudstic/internal/engine/treewalk"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// entry is one entry of a snapshot: its metadata and where it is. Node
// types embed it beside their fs.Inode.
type entry struct {
	m    *mountFS
	snap string // snapshot id
	path string // from the snapshot root; "" for the root
	node tree.Node
}

// specialEntry is a fifo, device or socket of a snapshot: metadata only.
type specialEntry struct {
	fs.Inode
	entry
}

var (
	_ fs.NodeGetattrer   = (*specialEntry)(nil)
	_ fs.NodeGetxattrer  = (*specialEntry)(nil)
	_ fs.NodeListxattrer = (*specialEntry)(nil)
)

// entryNode makes the inode of a snapshot entry, filling out. Members of
// a hard-link group share one inode number, so the kernel sees one file.
func (m *mountFS) entryNode(ctx context.Context, parent *fs.Inode, snap, path string, n *tree.Node, out *fuse.EntryOut) *fs.Inode {
	ino := inode("entry", snap, path)
	if n.Type != tree.TypeDir && n.Links > 1 && n.Inode != 0 {
		ino = inode("hardlink", snap, uintString(n.Device), uintString(n.Inode))
	}
	e := entry{m: m, snap: snap, path: path, node: *n}
	fillAttr(n, &out.Attr)
	var ops fs.InodeEmbedder
	switch n.Type {
	case tree.TypeDir:
		ops = &dirEntry{entry: e}
	case tree.TypeFile:
		ops = &fileEntry{entry: e}
	case tree.TypeSymlink:
		ops = &linkEntry{entry: e}
	default:
		ops = &specialEntry{entry: e}
	}
	return parent.NewInode(ctx, ops, fs.StableAttr{Mode: out.Mode & syscall.S_IFMT, Ino: ino})
}

func uintString(v uint64) string {
	var b [8]byte
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
	return string(b[:])
}

// fillAttr gives a snapshot entry's metadata to the kernel.
func fillAttr(n *tree.Node, a *fuse.Attr) {
	a.Mode = typeBits(n.Type) | n.Mode&0o7777
	a.Size = n.Size
	if n.Type == tree.TypeSymlink {
		a.Size = uint64(len(n.LinkTarget))
	}
	a.Blocks = (a.Size + 511) / 512
	a.Nlink = 1
	if n.Type != tree.TypeDir && n.Links > 1 {
		a.Nlink = uint32(n.Links)
	}
	a.Uid, a.Gid = n.UID, n.GID
	a.Rdev = uint32(n.Rdev)
	mtime := time.Unix(0, n.MTime)
	ctime := mtime
	if n.CTime != 0 {
		ctime = time.Unix(0, n.CTime)
	}
	a.SetTimes(&mtime, &mtime, &ctime)
}

func typeBits(t tree.Type) uint32 {
	switch t {
	case tree.TypeDir:
		return syscall.S_IFDIR
	case tree.TypeSymlink:
		return syscall.S_IFLNK
	case tree.TypeFIFO:
		return syscall.S_IFIFO
	case tree.TypeCharDev:
		return syscall.S_IFCHR
	case tree.TypeBlkDev:
		return syscall.S_IFBLK
	case tree.TypeSocket:
		return syscall.S_IFSOCK
	}
	return syscall.S_IFREG
}

func (e *entry) Getattr(_ context.Context, _ fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	fillAttr(&e.node, &out.Attr)
	return 0
}

func (e *entry) Getxattr(_ context.Context, attr string, dest []byte) (uint32, syscall.Errno) {
	for _, x := range e.node.Xattrs {
		if x.Name == attr {
			if len(dest) < len(x.Value) {
				return uint32(len(x.Value)), syscall.ERANGE
			}
			return uint32(copy(dest, x.Value)), 0
		}
	}
	return 0, errNoAttr
}

func (e *entry) Listxattr(_ context.Context, dest []byte) (uint32, syscall.Errno) {
	var names []byte
	for _, x := range e.node.Xattrs {
		names = append(append(names, x.Name...), 0)
	}
	if len(dest) < len(names) {
		return uint32(len(names)), syscall.ERANGE
	}
	return uint32(copy(dest, names)), 0
}

// linkEntry is a symlink of a snapshot.
type linkEntry struct {
	fs.Inode
	entry
}

var _ fs.NodeReadlinker = (*linkEntry)(nil)

func (l *linkEntry) Readlink(context.Context) ([]byte, syscall.Errno) {
	return []byte(l.node.LinkTarget), 0
}

// dirEntry is a directory of a snapshot; its tree is read when first
// used, through the mount's tree cache.
type dirEntry struct {
	fs.Inode
	entry
}

var (
	_ fs.NodeLookuper  = (*dirEntry)(nil)
	_ fs.NodeReaddirer = (*dirEntry)(nil)
)

// load reads the directory's tree. One whose entries would be deeper than
// tree.MaxDepth is refused, as every reader refuses it: that also keeps
// the paths the mount holds bounded.
func (d *dirEntry) load(ctx context.Context) (*tree.Tree, syscall.Errno) {
	t, err := d.m.trees.get(ctx, d.node.Subtree)
	if err == nil && len(t.Nodes) > 0 && treewalk.Depth(d.path) >= tree.MaxDepth {
		err = tree.ErrTooDeep
	}
	if err != nil {
		return nil, d.m.errno("directory "+d.display(), err)
	}
	return t, 0
}

func (d *dirEntry) display() string {
	return d.snap[:8] + ":/" + treewalk.ShortPath(d.path)
}

func (d *dirEntry) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	t, errno := d.load(ctx)
	if errno != 0 {
		return nil, errno
	}
	entries := make([]fuse.DirEntry, 0, len(t.Nodes))
	for i := range t.Nodes {
		n := &t.Nodes[i]
		entries = append(entries, fuse.DirEntry{Name: n.Name, Mode: typeBits(n.Type)})
	}
	return fs.NewListDirStream(entries), 0
}

func (d *dirEntry) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	t, errno := d.load(ctx)
	if errno != 0 {
		return nil, errno
	}
	n, ok := treewalk.Child(t, name)
	if !ok {
		return nil, syscall.ENOENT
	}
	p := name
	if d.path != "" {
		p = d.path + "/" + name
	}
	return d.m.entryNode(ctx, &d.Inode, d.snap, p, n, out), 0
}
