package fsmeta

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/cloudstic/cloudstic/internal/repo/tree"
	"github.com/cloudstic/cloudstic/internal/source"
)

// errNoStat means an entry's metadata came without the system's or a
// source's stat structure.
var errNoStat = errors.New("metadata without a stat structure")

// Capturer builds tree.Nodes from the entries of a source. It caches the
// user and group names of the ids it meets; it is safe for concurrent use.
type Capturer struct {
	src   source.Source
	names *idNames
	sd    sdCapture // security descriptors (Windows)
	// SkipXattrs records no extended attributes (and reads none).
	SkipXattrs bool
	// XattrNamespaces, when set, records only the attributes whose names
	// start with one of these prefixes (e.g. "user.", "trusted.").
	XattrNamespaces []string
	// SkipFlags records no inode flags (and reads none).
	SkipFlags bool
	// SkipMode records no permission bits, owner, flags or security
	// descriptor: entries get the default mode of their type (0644,
	// directories 0755, symlinks 0777), uid and gid 0 and no names.
	SkipMode bool
	// Warnf receives warnings about metadata that could not be read but
	// does not fail the capture: a security descriptor the process may
	// not read (Windows), reported once. Nil discards them.
	Warnf func(format string, args ...any)
}

// NewCapturer returns a Capturer of src's entries with empty name caches.
func NewCapturer(src source.Source) *Capturer {
	return &Capturer{src: src, names: newIDNames()}
}

// Node describes the entry at path, whose lstat result is fi (as given by
// the source's Lstat or ReadDir; a symlink is never followed). It fills
// every field but Content and Subtree, which belong to the caller. Beyond
// fi it costs, on the local file system, one llistxattr call, plus one
// lgetxattr per attribute and a readlink for a symlink.
func (c *Capturer) Node(ctx context.Context, path string, fi fs.FileInfo) (tree.Node, error) {
	return c.NodeSince(ctx, path, fi, nil)
}

// NodeSince is Node for an entry that an earlier capture described as prev
// (nil if none). When the entry is still prev's inode on prev's device, of
// prev's type, with prev's change time, its extended attributes and a
// symlink's target are taken from prev instead of being read again: setting
// or removing an attribute updates the change time, and a symlink's target
// cannot change in place. The llistxattr call this saves per unchanged file
// was an eighth of a no-change backup's system calls. A source that has no
// change times (SFTP) always reads them again.
func (c *Capturer) NodeSince(ctx context.Context, path string, fi fs.FileInfo, prev *tree.Node) (tree.Node, error) {
	n, err := c.stat(path, fi)
	if err != nil {
		return tree.Node{}, err
	}
	if prev != nil && n.CTime != 0 && prev.Type == n.Type && prev.CTime == n.CTime && prev.Inode == n.Inode && prev.Device == n.Device {
		// prev may have been captured with other xattr settings.
		n.Xattrs = c.keptXattrs(prev.Xattrs)
		n.LinkTarget = prev.LinkTarget
		if c.flagsWanted(n.Type) {
			n.Flags = prev.Flags // chattr updates the change time too
		}
		return n, nil
	}
	if c.flagsWanted(n.Type) {
		if n.Flags, err = c.flags(ctx, path); err != nil {
			return tree.Node{}, fmt.Errorf("fsmeta: capture %s: %w", path, err)
		}
	}
	if n.Type == tree.TypeSymlink {
		target, err := c.src.Readlink(ctx, path)
		if err != nil {
			return tree.Node{}, fmt.Errorf("fsmeta: capture %s: %w", path, err)
		}
		n.LinkTarget = target
	}
	if c.SkipXattrs {
		return n, nil
	}
	xattrs, err := c.src.Xattrs(ctx, path)
	if err != nil {
		return tree.Node{}, fmt.Errorf("fsmeta: capture %s: %w", path, err)
	}
	n.Xattrs = c.keptXattrs(treeXattrs(xattrs))
	return n, nil
}

// flagsWanted says whether inode flags are recorded for entries of type t.
func (c *Capturer) flagsWanted(t tree.Type) bool { return !c.SkipFlags && !c.SkipMode && hasFlags(t) }

// keptXattrs is the part of xattrs that SkipXattrs and XattrNamespaces
// keep (the list itself when all of it).
func (c *Capturer) keptXattrs(xattrs []tree.Xattr) []tree.Xattr {
	if c.SkipXattrs {
		return nil
	}
	if len(c.XattrNamespaces) == 0 || len(xattrs) == 0 {
		return xattrs
	}
	var kept []tree.Xattr
	for _, x := range xattrs {
		for _, ns := range c.XattrNamespaces {
			if strings.HasPrefix(x.Name, ns) {
				kept = append(kept, x)
				break
			}
		}
	}
	return kept
}

// treeXattrs converts a source's attributes (nil for none).
func treeXattrs(xs []source.Xattr) []tree.Xattr {
	if len(xs) == 0 {
		return nil
	}
	out := make([]tree.Xattr, len(xs))
	for i, x := range xs {
		out[i] = tree.Xattr{Name: x.Name, Value: x.Value}
	}
	return out
}

// stat fills the fields of a node that come from its lstat result: a
// source's portable Stat, or the local file system's (localStat, per
// platform).
func (c *Capturer) stat(path string, fi fs.FileInfo) (tree.Node, error) {
	if sst := source.StatOf(fi); sst != nil {
		return portableStat(path, fi, sst)
	}
	n, err := c.localStat(path, fi)
	if err != nil {
		return tree.Node{}, err
	}
	if c.SkipMode {
		n.Mode, n.UID, n.GID, n.User, n.Group = defaultMode(n.Type), 0, 0, "", ""
	} else {
		n.SDDL = c.sd.read(path, c.Warnf)
	}
	return n, nil
}

// defaultMode is the mode recorded under SkipMode: what a new entry of
// type t usually gets under umask 022.
func defaultMode(t tree.Type) uint32 {
	switch t {
	case tree.TypeDir:
		return 0o755
	case tree.TypeSymlink:
		return 0o777
	}
	return 0o644
}

// portableStat fills a node from the metadata of a source other than the
// local file system. The type comes from fi's mode; the rest from st.
func portableStat(path string, fi fs.FileInfo, st *source.Stat) (tree.Node, error) {
	n := tree.Node{
		Name: filepath.Base(path), Mode: st.Mode & 0o7777, MTime: st.MTime, CTime: st.CTime,
		Device: st.Device, Inode: st.Inode, Links: st.Links, UID: st.UID, GID: st.GID, User: st.User, Group: st.Group,
	}
	if d := st.Drive; d != nil {
		n.Cloud = &tree.Cloud{ID: d.ID, Name: d.Name, Hash: d.Hash, MIME: d.MIME, Target: d.Target}
	}
	switch t := fi.Mode().Type(); t {
	case 0:
		n.Type = tree.TypeFile
		n.Size = uint64(fi.Size())
	case fs.ModeDir:
		n.Type = tree.TypeDir
	case fs.ModeSymlink:
		n.Type = tree.TypeSymlink
	case fs.ModeNamedPipe:
		n.Type = tree.TypeFIFO
	case fs.ModeSocket:
		n.Type = tree.TypeSocket
	case fs.ModeDevice | fs.ModeCharDevice:
		n.Type = tree.TypeCharDev
	case fs.ModeDevice:
		n.Type = tree.TypeBlkDev
	default:
		return tree.Node{}, fmt.Errorf("fsmeta: capture %s: unknown file type %v", path, t)
	}
	return n, nil
}
