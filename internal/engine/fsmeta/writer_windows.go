package fsmeta

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/windows"

	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// The Writer on Windows. Entries are created through the os.Root (which
// keeps every path inside the output directory) and changed through a
// handle opened relative to their parent directory (openAt), never
// following a reparse point. What Windows has no notion of is reported,
// not restored: FIFOs, devices and sockets, owners and groups as numbers,
// permission bits beyond read-only, extended attributes. Security
// descriptors (sd_windows.go) are.

// dirCache is empty on Windows: parents are opened through the Root per
// call.
type dirCache struct{}

func (*dirCache) closeAll() {}

// atParent checks rel, opens its parent directory through the Root and
// calls f with that directory's handle and the last element of rel.
func (w *Writer) atParent(rel string, f func(dir windows.Handle, base string) error) error {
	dir, base, err := splitRel(rel)
	if err != nil {
		return err
	}
	d, err := w.root.Open(dir)
	if err != nil {
		return fmt.Errorf("open parent: %w", err)
	}
	defer d.Close() //nolint:errcheck // read-only directory handle: nothing to flush
	return f(windows.Handle(d.Fd()), base)
}

// CreateFile creates the regular file rel for writing. It never opens or
// overwrites an existing entry, nor follows a link: if anything is already
// at rel it returns ErrExists and leaves it untouched (CREATE_NEW).
func (w *Writer) CreateFile(rel string, _ *tree.Node) (*os.File, error) {
	rel = HostRel(rel) // the name it has here
	if _, _, err := splitRel(rel); err != nil {
		return nil, err
	}
	f, err := w.root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("fsmeta: create %s: %w", rel, ErrExists)
	}
	if err != nil {
		return nil, fmt.Errorf("fsmeta: create %s: %w", rel, err)
	}
	return f, nil
}

// Special reports FIFOs, devices and sockets as not restored: Windows has
// none in its file system. Devices withheld by NoDevices are counted.
func (w *Writer) Special(rel string, n *tree.Node) error {
	rel = HostRel(rel) // the name it has here
	if _, _, err := splitRel(rel); err != nil {
		return err
	}
	switch n.Type {
	case tree.TypeFIFO, tree.TypeSocket:
	case tree.TypeCharDev, tree.TypeBlkDev:
		if w.opts.NoDevices {
			w.priv.devicesWithheld.Add(1)
			return nil
		}
	default:
		return fmt.Errorf("fsmeta: special %s: not a special file type: %q", rel, n.Type)
	}
	w.opts.Logf("fsmeta: %s: %s not restored: Windows has none", rel, n.Type)
	return nil
}

// ApplyMeta gives the entry at rel the metadata of n that Windows has:
// its attributes (WinAttrs; for a node from another system, read-only
// from the owner's write bit), creation time, modification time and
// security descriptor (SDDL; what cannot be set is a warning, see
// applySecurity).
// Nothing is followed: if the entry on disk is a link and n is not (or the
// reverse), it returns ErrTypeMismatch and changes nothing. A FIFO, device
// or socket was not restored (Special): it returns nil.
func (w *Writer) ApplyMeta(rel string, n *tree.Node) error {
	rel = HostRel(rel) // the name it has here
	switch n.Type {
	case tree.TypeFIFO, tree.TypeSocket, tree.TypeCharDev, tree.TypeBlkDev:
		_, _, err := splitRel(rel)
		return err
	}
	err := w.atParent(rel, func(dir windows.Handle, base string) error {
		h, err := openAt(dir, base, windows.FILE_READ_ATTRIBUTES|windows.FILE_WRITE_ATTRIBUTES, windows.FILE_OPEN, 0)
		if err != nil {
			return fmt.Errorf("open: %w", err)
		}
		defer windows.CloseHandle(h) //nolint:errcheck // attributes only: nothing to flush
		if err := w.applyHandle(h, rel, n, true); err != nil {
			return err
		}
		w.applySecurity(dir, base, rel, n.SDDL, 0)
		return nil
	})
	if err != nil {
		return fmt.Errorf("fsmeta: apply metadata to %s: %w", rel, err)
	}
	return nil
}

// ApplyMetaFile is ApplyMeta for a regular file the caller created with
// CreateFile and still has open (for writing, which includes the right to
// set its attributes): no path is resolved again. Call it after the last
// write and before Close.
func (w *Writer) ApplyMetaFile(f *os.File, rel string, n *tree.Node) error {
	if n.Type != tree.TypeFile {
		return fmt.Errorf("fsmeta: apply metadata to %s: %w: want a regular file, node is %s", rel, ErrTypeMismatch, n.Type)
	}
	if err := w.applyHandle(windows.Handle(f.Fd()), rel, n, false); err != nil {
		return fmt.Errorf("fsmeta: apply metadata to %s: %w", rel, err)
	}
	// f was opened for writing, not for WRITE_DAC: reopened through it.
	w.applySecurity(windows.Handle(f.Fd()), "", rel, n.SDDL, windows.FILE_NON_DIRECTORY_FILE)
	return nil
}

// ApplyFlags does nothing on Windows: a file's attributes, read-only
// included, were set with its other metadata (ApplyMetaFile), and a
// read-only file can still be renamed.
func (w *Writer) ApplyFlags(rel string, _ *tree.Node) error {
	rel = HostRel(rel) // the name it has here
	_, _, err := splitRel(rel)
	return err
}

// ApplyRootMeta gives the output directory itself the metadata of n (the
// snapshot's source directory). Call it last: writing entries changes the
// directory's modification time.
func (w *Writer) ApplyRootMeta(n *tree.Node) error {
	if n.Type != tree.TypeDir {
		return fmt.Errorf("fsmeta: apply metadata to the output directory: %w: node is %s", ErrTypeMismatch, n.Type)
	}
	d, err := w.root.Open(".")
	if err != nil {
		return fmt.Errorf("fsmeta: open the output directory: %w", err)
	}
	defer d.Close() //nolint:errcheck // read-only directory handle: nothing to flush
	h, err := openAt(windows.Handle(d.Fd()), "", windows.FILE_READ_ATTRIBUTES|windows.FILE_WRITE_ATTRIBUTES, windows.FILE_OPEN, windows.FILE_DIRECTORY_FILE)
	if err != nil {
		return fmt.Errorf("fsmeta: open the output directory: %w", err)
	}
	defer windows.CloseHandle(h) //nolint:errcheck // attributes only: nothing to flush
	if err := w.applyHandle(h, ".", n, false); err != nil {
		return fmt.Errorf("fsmeta: apply metadata to the output directory: %w", err)
	}
	w.applySecurity(h, "", ".", n.SDDL, windows.FILE_DIRECTORY_FILE)
	return nil
}

// applyHandle sets the attributes and times of n on the open handle h.
// With checkType it first checks that h is a link exactly when n is one.
func (w *Writer) applyHandle(h windows.Handle, rel string, n *tree.Node, checkType bool) error {
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		return fmt.Errorf("GetFileInformationByHandle: %w", err)
	}
	isLink := info.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0
	if checkType && isLink != (n.Type == tree.TypeSymlink) {
		return fmt.Errorf("%w: want %s", ErrTypeMismatch, n.Type)
	}
	if len(n.Xattrs) > 0 {
		w.opts.Logf("fsmeta: %s: %d xattrs not restored: Windows has none", rel, len(n.Xattrs))
	}
	basic := fileBasicInfo{
		CreationTime:   fileTime(n.BirthTime),
		LastWriteTime:  fileTime(n.MTime),
		FileAttributes: restoredAttrs(info.FileAttributes, n),
	}
	if err := setBasicInfo(h, &basic); err != nil {
		return fmt.Errorf("SetFileInformationByHandle: %w", err)
	}
	return nil
}

// settableAttrs are the attributes SetFileInformationByHandle accepts;
// the others (directory, reparse point, compressed, encrypted, sparse)
// belong to the file system.
const settableAttrs = windows.FILE_ATTRIBUTE_READONLY | windows.FILE_ATTRIBUTE_HIDDEN | windows.FILE_ATTRIBUTE_SYSTEM |
	windows.FILE_ATTRIBUTE_ARCHIVE | windows.FILE_ATTRIBUTE_TEMPORARY | windows.FILE_ATTRIBUTE_OFFLINE |
	windows.FILE_ATTRIBUTE_NOT_CONTENT_INDEXED

// restoredAttrs are the attributes to give an entry that has cur: n's
// WinAttrs in place of cur's, the rest kept. A node from another system
// has none: a regular file is read-only when its owner may not write it,
// as os.Chmod does on Windows. 0 (no attribute at all) is written as
// FILE_ATTRIBUTE_NORMAL, since 0 would mean "leave them alone".
func restoredAttrs(cur uint32, n *tree.Node) uint32 {
	want := n.WinAttrs & WinAttrMask
	if n.WinAttrs == 0 && n.Type == tree.TypeFile && n.Mode&0o200 == 0 {
		want = windows.FILE_ATTRIBUTE_READONLY
	}
	attrs := cur&settableAttrs&^WinAttrMask | want
	if attrs == 0 {
		return windows.FILE_ATTRIBUTE_NORMAL
	}
	return attrs
}

// Lstat returns what is at rel without following a final link, or an
// error wrapping fs.ErrNotExist when nothing is. Dev and Ino are 0: Windows
// tells a file's index only through an open handle.
func (w *Writer) Lstat(rel string) (*Existing, error) {
	rel = HostRel(rel) // the name it has here
	if _, _, err := splitRel(rel); err != nil {
		return nil, err
	}
	fi, err := w.root.Lstat(rel)
	if err != nil {
		return nil, fmt.Errorf("fsmeta: lstat %s: %w", rel, err)
	}
	t, ok := windowsType(fi)
	if !ok {
		t = tree.TypeSocket // something no snapshot entry matches
	}
	return &Existing{Size: fi.Size(), MTime: fi.ModTime().UnixNano(), typ: t}, nil
}

// Readlink returns the target of the link at rel.
func (w *Writer) Readlink(rel string) (string, error) {
	rel = HostRel(rel) // the name it has here
	if _, _, err := splitRel(rel); err != nil {
		return "", err
	}
	target, err := w.root.Readlink(rel)
	if err != nil {
		return "", fmt.Errorf("fsmeta: readlink %s: %w", rel, err)
	}
	return target, nil
}

// Rename moves the entry from (a temporary name) to rel, both in the same
// directory, atomically (one rename of the open file relative to its
// directory): rel is either the old entry or the new one. With noReplace
// it fails with ErrExists if anything is at rel; otherwise it replaces a
// non-directory at rel, a read-only one included (a directory there is
// ErrIsDir).
func (w *Writer) Rename(from, rel string, noReplace bool) error {
	from = HostRel(from) // the name it has here
	rel = HostRel(rel)   // the name it has here
	fromDir, fromBase, err := splitRel(from)
	if err != nil {
		return err
	}
	if dir, _, err := splitRel(rel); err != nil {
		return err
	} else if dir != fromDir {
		return fmt.Errorf("fsmeta: rename %s to %s: different directories", from, rel)
	}
	if !noReplace {
		if ex, err := w.Lstat(rel); err == nil && ex.Type() == tree.TypeDir {
			return fmt.Errorf("fsmeta: rename %s: %w", rel, ErrIsDir)
		}
	}
	err = w.atParent(rel, func(dir windows.Handle, base string) error {
		h, err := openAt(dir, fromBase, windows.DELETE, windows.FILE_OPEN, 0)
		if err != nil {
			return err
		}
		defer windows.CloseHandle(h) //nolint:errcheck // renamed through it: nothing to flush
		err = renameAt(h, dir, base, !noReplace)
		if !noReplace && errors.Is(err, windows.ERROR_ACCESS_DENIED) && clearReadOnlyAt(dir, base) {
			err = renameAt(h, dir, base, true)
		}
		return err
	})
	switch {
	case errors.Is(err, fs.ErrExist):
		return fmt.Errorf("fsmeta: rename %s: %w", rel, ErrExists)
	case err != nil:
		return fmt.Errorf("fsmeta: rename %s to %s: %w", from, rel, err)
	}
	return nil
}

// clearReadOnlyAt clears the read-only attribute of base in dir, which
// Windows requires before a file is replaced or removed, and says whether
// there was one to clear.
func clearReadOnlyAt(dir windows.Handle, base string) bool {
	h, err := openAt(dir, base, windows.FILE_READ_ATTRIBUTES|windows.FILE_WRITE_ATTRIBUTES, windows.FILE_OPEN, 0)
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h) //nolint:errcheck // attributes only: nothing to flush
	var info windows.ByHandleFileInformation
	if windows.GetFileInformationByHandle(h, &info) != nil || info.FileAttributes&windows.FILE_ATTRIBUTE_READONLY == 0 {
		return false
	}
	attrs := info.FileAttributes & settableAttrs &^ windows.FILE_ATTRIBUTE_READONLY
	if attrs == 0 {
		attrs = windows.FILE_ATTRIBUTE_NORMAL
	}
	return setBasicInfo(h, &fileBasicInfo{FileAttributes: attrs}) == nil
}

// Remove removes the non-directory entry at rel (a link itself, never
// what it points to), read-only or not. A directory there is ErrIsDir.
func (w *Writer) Remove(rel string) error {
	rel = HostRel(rel) // the name it has here
	ex, err := w.Lstat(rel)
	if err != nil {
		return fmt.Errorf("fsmeta: remove %s: %w", rel, err)
	}
	if ex.Type() == tree.TypeDir {
		return fmt.Errorf("fsmeta: remove %s: %w", rel, ErrIsDir)
	}
	err = w.root.Remove(rel)
	if errors.Is(err, windows.ERROR_ACCESS_DENIED) {
		cleared := false
		if aerr := w.atParent(rel, func(dir windows.Handle, base string) error {
			cleared = clearReadOnlyAt(dir, base)
			return nil
		}); aerr == nil && cleared {
			err = w.root.Remove(rel)
		}
	}
	if err != nil {
		return fmt.Errorf("fsmeta: remove %s: %w", rel, err)
	}
	return nil
}

// RemoveAll removes rel and, if it is a directory, everything below it,
// without following links out of the output directory.
func (w *Writer) RemoveAll(rel string) error {
	rel = HostRel(rel) // the name it has here
	if _, _, err := splitRel(rel); err != nil {
		return err
	}
	if err := w.root.RemoveAll(rel); err != nil {
		return fmt.Errorf("fsmeta: remove %s: %w", rel, err)
	}
	return nil
}

// ReadDirNames lists the names in the directory rel ("." for the output
// directory), which must not be a link.
func (w *Writer) ReadDirNames(rel string) ([]string, error) {
	rel = HostRel(rel) // the name it has here
	if rel != "." {
		ex, err := w.Lstat(rel)
		if err != nil {
			return nil, fmt.Errorf("fsmeta: open directory %s: %w", rel, err)
		}
		if ex.Type() != tree.TypeDir {
			return nil, fmt.Errorf("fsmeta: open directory %s: %w: not a directory", rel, ErrTypeMismatch)
		}
	}
	f, err := w.root.Open(rel)
	if err != nil {
		return nil, fmt.Errorf("fsmeta: open directory %s: %w", rel, err)
	}
	defer f.Close() //nolint:errcheck // read-only directory: nothing to flush
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("fsmeta: read directory %s: %w", rel, err)
	}
	return names, nil
}

// OpenRead opens the regular file at rel for reading, without following a
// final link.
func (w *Writer) OpenRead(rel string) (*os.File, error) {
	rel = HostRel(rel) // the name it has here
	var f *os.File
	err := w.atParent(rel, func(dir windows.Handle, base string) error {
		h, err := openAt(dir, base, windows.GENERIC_READ, windows.FILE_OPEN, windows.FILE_NON_DIRECTORY_FILE)
		if err != nil {
			return err
		}
		f = os.NewFile(uintptr(h), rel)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("fsmeta: open %s: %w", rel, err)
	}
	return f, nil
}
