package fsmeta

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"

	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// localStat fills a node from what Windows's lstat gives: the type, size,
// modification and creation times and the file attributes
// (syscall.Win32FileAttributeData). Windows has no Unix owners, modes,
// change times, inode numbers or link counts without opening the file:
// the mode is the usual one of the type (0644, directories 0755, symlinks
// 0777), without the write bits for a read-only file; the rest stays 0,
// so hard links are backed up as separate files. (The entry's security
// descriptor is read after, see sdCapture.read.)
func (c *Capturer) localStat(path string, fi fs.FileInfo) (tree.Node, error) {
	d, ok := fi.Sys().(*syscall.Win32FileAttributeData)
	if !ok {
		return tree.Node{}, fmt.Errorf("fsmeta: capture %s: %w", path, errNoStat)
	}
	t, ok := windowsType(fi)
	if !ok {
		return tree.Node{}, fmt.Errorf("fsmeta: capture %s: unknown file type %v", path, fi.Mode().Type())
	}
	n := tree.Node{
		Name:      filepath.Base(path),
		Type:      t,
		Mode:      defaultMode(t),
		MTime:     fi.ModTime().UnixNano(),
		BirthTime: d.CreationTime.Nanoseconds(),
	}
	if d.FileAttributes&syscall.FILE_ATTRIBUTE_READONLY != 0 && t != tree.TypeSymlink {
		n.Mode &^= 0o222
	}
	if t == tree.TypeFile {
		n.Size = uint64(fi.Size()) //nolint:gosec // a file's size is never negative
	}
	if !c.SkipFlags && !c.SkipMode {
		n.WinAttrs = d.FileAttributes & WinAttrMask
	}
	return n, nil
}

// windowsType is the kind of the entry fi describes, as a snapshot names
// it. Go reports a junction or mount point as irregular (it is a link to
// a directory, not a directory): it is recorded as a symlink to its
// target. Other irregular entries are files a storage service keeps in
// its own way (OneDrive placeholders, deduplicated files): read as files,
// or as directories when they are directories.
func windowsType(fi fs.FileInfo) (tree.Type, bool) {
	m := fi.Mode()
	attrs := uint32(0)
	if d, ok := fi.Sys().(*syscall.Win32FileAttributeData); ok {
		attrs = d.FileAttributes
	}
	switch {
	case m&fs.ModeSymlink != 0:
		return tree.TypeSymlink, true
	case m.IsDir():
		return tree.TypeDir, true
	case m.IsRegular():
		return tree.TypeFile, true
	case m&fs.ModeSocket != 0:
		return tree.TypeSocket, true
	case m&fs.ModeIrregular != 0 && attrs&syscall.FILE_ATTRIBUTE_REPARSE_POINT != 0 && attrs&syscall.FILE_ATTRIBUTE_DIRECTORY != 0:
		return tree.TypeSymlink, true
	case m&fs.ModeIrregular != 0:
		return tree.TypeFile, true
	}
	return "", false
}
