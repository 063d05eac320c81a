//go:build !windows

package mount

import (
	"context"
	"os"
	"slices"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/cloudstic/cloudstic/internal/engine/treewalk"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// listTimeout is how long the kernel may keep what the listing
// directories say: short, so new snapshots show up.
const listTimeout = time.Second

// Kinds of listing directory.
const (
	kindSnapshots = "snapshots" // snapshot directories and latest
	kindIDs       = "ids"       // short id → ../snapshots/<name>
	kindHosts     = "hosts"     // one directory per host
	kindTags      = "tags"      // one directory per tag
	kindHost      = "host"      // the snapshots of one host
	kindTag       = "tag"       // the snapshots of one tag
)

// rootDir is the mount's top directory.
type rootDir struct {
	fs.Inode
	m *mountFS
}

var (
	_ fs.NodeLookuper  = (*rootDir)(nil)
	_ fs.NodeReaddirer = (*rootDir)(nil)
	_ fs.NodeGetattrer = (*rootDir)(nil)
)

func (d *rootDir) Getattr(ctx context.Context, _ fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	d.m.virtualAttr(ctx, &out.Attr, fuse.S_IFDIR|0o555)
	out.SetTimeout(listTimeout)
	return 0
}

func (d *rootDir) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	var entries []fuse.DirEntry
	for _, k := range []string{kindSnapshots, kindIDs, kindHosts, kindTags} {
		entries = append(entries, fuse.DirEntry{Name: k, Mode: fuse.S_IFDIR, Ino: inode("list", k)})
	}
	entries = append(entries, fuse.DirEntry{Name: "latest", Mode: fuse.S_IFLNK})
	return fs.NewListDirStream(entries), 0
}

func (d *rootDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	switch name {
	case kindSnapshots, kindIDs, kindHosts, kindTags:
		return d.m.listNode(ctx, &d.Inode, name, "", out), 0
	case "latest":
		list, err := d.m.snaps.get(ctx)
		if err != nil {
			return nil, d.m.errno("listing snapshots", err)
		}
		if len(list) == 0 {
			return nil, syscall.ENOENT
		}
		return d.m.symlinkNode(ctx, &d.Inode, "snapshots/"+list[len(list)-1].name, out), 0
	}
	return nil, syscall.ENOENT
}

// listDir lists snapshots, hosts or tags.
type listDir struct {
	fs.Inode
	m      *mountFS
	kind   string
	filter string // the host or tag of kindHost and kindTag
}

var (
	_ fs.NodeLookuper  = (*listDir)(nil)
	_ fs.NodeReaddirer = (*listDir)(nil)
	_ fs.NodeGetattrer = (*listDir)(nil)
)

func (m *mountFS) listNode(ctx context.Context, parent *fs.Inode, kind, filter string, out *fuse.EntryOut) *fs.Inode {
	m.virtualAttr(ctx, &out.Attr, fuse.S_IFDIR|0o555)
	out.SetEntryTimeout(listTimeout)
	out.SetAttrTimeout(listTimeout)
	return parent.NewInode(ctx, &listDir{m: m, kind: kind, filter: filter},
		fs.StableAttr{Mode: fuse.S_IFDIR, Ino: inode("list", kind, filter)})
}

// symlinkNode makes a symlink whose inode number includes its target: a
// link that now points elsewhere (latest) is a new inode.
func (m *mountFS) symlinkNode(ctx context.Context, parent *fs.Inode, target string, out *fuse.EntryOut) *fs.Inode {
	m.virtualAttr(ctx, &out.Attr, fuse.S_IFLNK|0o777)
	out.Size = uint64(len(target))
	out.SetEntryTimeout(listTimeout)
	out.SetAttrTimeout(listTimeout)
	return parent.NewInode(ctx, &fs.MemSymlink{Data: []byte(target), Attr: out.Attr},
		fs.StableAttr{Mode: fuse.S_IFLNK, Ino: inode("symlink", target)})
}

// virtualAttr fills the attributes of a directory or link that is not
// part of a snapshot: owned by the user who mounted, dated by the newest
// snapshot.
func (m *mountFS) virtualAttr(ctx context.Context, a *fuse.Attr, mode uint32) {
	a.Mode = mode
	a.Nlink = 1
	a.Uid, a.Gid = uint32(os.Getuid()), uint32(os.Getgid())
	if list, err := m.snaps.get(ctx); err == nil && len(list) > 0 {
		t := list[len(list)-1].Time
		a.SetTimes(&t, &t, &t)
	}
}

func (d *listDir) Getattr(ctx context.Context, _ fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	d.m.virtualAttr(ctx, &out.Attr, fuse.S_IFDIR|0o555)
	out.SetTimeout(listTimeout)
	return 0
}

// member is one entry of a listing directory.
type member struct {
	name   string
	mode   uint32 // fuse.S_IFDIR or fuse.S_IFLNK
	target string // of a symlink
	snap   named  // of a snapshot directory
}

// members computes what the directory holds now.
func (d *listDir) members(ctx context.Context) ([]member, error) {
	list, err := d.m.snaps.get(ctx)
	if err != nil {
		return nil, err
	}
	var out []member
	var latest string
	switch d.kind {
	case kindSnapshots:
		for _, s := range list {
			out = append(out, member{name: s.name, mode: fuse.S_IFDIR, snap: s})
			latest = s.name
		}
	case kindIDs:
		for _, s := range list {
			out = append(out, member{name: s.ID.String()[:8], mode: fuse.S_IFLNK, target: "../snapshots/" + s.name})
		}
	case kindHosts, kindTags:
		seen := map[string]bool{}
		for _, s := range list {
			names := s.Tags
			if d.kind == kindHosts {
				names = []string{s.Hostname}
			}
			for _, n := range names {
				if !seen[n] && tree.CheckName(n) == nil {
					seen[n] = true
					out = append(out, member{name: n, mode: fuse.S_IFDIR})
				}
			}
		}
	case kindHost, kindTag:
		for _, s := range list {
			if (d.kind == kindHost && s.Hostname == d.filter) || (d.kind == kindTag && slices.Contains(s.Tags, d.filter)) {
				out = append(out, member{name: s.name, mode: fuse.S_IFLNK, target: "../../snapshots/" + s.name})
				latest = s.name
			}
		}
	}
	if latest != "" {
		target := latest
		if d.kind != kindSnapshots {
			target = "../../snapshots/" + latest
		}
		out = append(out, member{name: "latest", mode: fuse.S_IFLNK, target: target})
	}
	return out, nil
}

func (d *listDir) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	ms, err := d.members(ctx)
	if err != nil {
		return nil, d.m.errno("listing snapshots", err)
	}
	entries := make([]fuse.DirEntry, 0, len(ms))
	for _, mb := range ms {
		entries = append(entries, fuse.DirEntry{Name: mb.name, Mode: mb.mode})
	}
	return fs.NewListDirStream(entries), 0
}

func (d *listDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	ms, err := d.members(ctx)
	if err != nil {
		return nil, d.m.errno("listing snapshots", err)
	}
	i := slices.IndexFunc(ms, func(mb member) bool { return mb.name == name })
	if i < 0 {
		return nil, syscall.ENOENT
	}
	mb := ms[i]
	switch {
	case mb.mode == fuse.S_IFLNK:
		return d.m.symlinkNode(ctx, &d.Inode, mb.target, out), 0
	case d.kind == kindHosts:
		return d.m.listNode(ctx, &d.Inode, kindHost, name, out), 0
	case d.kind == kindTags:
		return d.m.listNode(ctx, &d.Inode, kindTag, name, out), 0
	}
	root := treewalk.Root(mb.snap.Tree, mb.snap.Root)
	return d.m.entryNode(ctx, &d.Inode, mb.snap.ID.String(), "", &root, out), 0
}
