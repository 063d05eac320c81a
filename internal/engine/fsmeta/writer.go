package fsmeta

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"

	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// WriterOptions configures a Writer.
type WriterOptions struct {
	// Owners restores owners and groups (chown). It needs root; see
	// DefaultWriterOptions.
	Owners bool
	// Logf receives warnings about what could not be restored but is not
	// an error (devices as non-root, sockets, unsupported xattrs). Nil
	// discards them.
	Logf func(format string, args ...any)
	// NoSetuid gives regular files their modes without the setuid and
	// setgid bits; NoDevices creates no device nodes (FIFOs still); and
	// NoCapabilities sets no security.capability attribute. What they
	// withhold is counted (Writer.Privileges), not logged one by one.
	NoSetuid, NoDevices, NoCapabilities bool
}

// DefaultWriterOptions returns the options a restore uses unless told
// otherwise: owners are restored when running as root.
func DefaultWriterOptions() WriterOptions {
	return WriterOptions{Owners: os.Geteuid() == 0}
}

// Writer creates entries below one output directory and applies their
// metadata, never writing outside it. Every rel argument is a
// slash-separated path relative to the output directory whose elements
// each pass ValidName. Safe for concurrent use.
type Writer struct {
	root   *os.Root
	dirs   dirCache
	opts   WriterOptions
	isRoot bool
	ids    *localIDs
	priv   privilegeCounters
}

// NewWriter opens dir, creating it (mode 0755 before umask) if missing, as
// the output directory of a restore.
func NewWriter(dir string, opts WriterOptions) (*Writer, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("fsmeta: create output directory: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("fsmeta: open output directory: %w", err)
	}
	return newWriter(root, opts), nil
}

// NewWriterIn is NewWriter for dir relative to parent: creating and opening
// dir never leaves parent, even through a symbolic link that replaces one
// of dir's directories meanwhile (the dashboard's -restore-root).
func NewWriterIn(parent *os.Root, dir string, opts WriterOptions) (*Writer, error) {
	if err := parent.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("fsmeta: create output directory: %w", err)
	}
	root, err := parent.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("fsmeta: open output directory: %w", err)
	}
	return newWriter(root, opts), nil
}

func newWriter(root *os.Root, opts WriterOptions) *Writer {
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	return &Writer{root: root, opts: opts, isRoot: os.Geteuid() == 0, ids: newLocalIDs()}
}

// Close releases the output directory.
func (w *Writer) Close() error {
	w.dirs.closeAll()
	if err := w.root.Close(); err != nil {
		return fmt.Errorf("fsmeta: close output directory: %w", err)
	}
	return nil
}

// Mkdir creates the directory rel (mode 0700 until ApplyMeta; its parent
// must exist). A directory already there is fine; anything else there is
// ErrExists.
func (w *Writer) Mkdir(rel string, _ *tree.Node) error {
	if _, _, err := splitRel(rel); err != nil {
		return err
	}
	err := w.root.Mkdir(rel, 0o700)
	if errors.Is(err, fs.ErrExist) {
		fi, lerr := w.root.Lstat(rel)
		if lerr == nil && fi.IsDir() {
			return nil
		}
		return fmt.Errorf("fsmeta: mkdir %s: %w", rel, ErrExists)
	}
	if err != nil {
		return fmt.Errorf("fsmeta: mkdir %s: %w", rel, err)
	}
	return nil
}

// CreateFile creates the regular file rel for writing (mode 0600 until
// ApplyMeta). It never opens or overwrites an existing entry, nor follows
// a symlink: if anything is already at rel it returns ErrExists and leaves
// it untouched.
func (w *Writer) CreateFile(rel string, _ *tree.Node) (*os.File, error) {
	var f *os.File
	err := w.atParent(rel, func(dirfd int, base string) error {
		// base is one checked name and O_NOFOLLOW|O_EXCL creates a new
		// file or fails: nothing here can follow a link.
		fd, err := unix.Openat(dirfd, base, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return err
		}
		f = os.NewFile(uintptr(fd), rel)
		return nil
	})
	if errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("fsmeta: create %s: %w", rel, ErrExists)
	}
	if err != nil {
		return nil, fmt.Errorf("fsmeta: create %s: %w", rel, err)
	}
	return f, nil
}

// Symlink creates rel as a symlink to n.LinkTarget, stored as is (even
// absolute or climbing out with ".."): the link is never followed here.
func (w *Writer) Symlink(rel string, n *tree.Node) error {
	if _, _, err := splitRel(rel); err != nil {
		return err
	}
	err := w.root.Symlink(n.LinkTarget, rel)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("fsmeta: symlink %s: %w", rel, ErrExists)
	}
	if err != nil {
		return fmt.Errorf("fsmeta: symlink %s: %w", rel, err)
	}
	return nil
}

// Hardlink creates rel as a hard link to existingRel, both inside the
// output directory. If existingRel is a symlink the link is to the symlink
// itself.
func (w *Writer) Hardlink(existingRel, rel string) error {
	if _, _, err := splitRel(existingRel); err != nil {
		return err
	}
	if _, _, err := splitRel(rel); err != nil {
		return err
	}
	err := w.root.Link(existingRel, rel)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("fsmeta: link %s: %w", rel, ErrExists)
	}
	if err != nil {
		return fmt.Errorf("fsmeta: link %s to %s: %w", rel, existingRel, err)
	}
	return nil
}

// Special creates a FIFO or a device node at rel (mode 0600 until
// ApplyMeta). Devices need root: otherwise, or if the kernel refuses
// (EPERM, as in many containers), it logs a warning and returns nil.
// Sockets are not restored (they belong to a running process); that too
// is only a warning.
func (w *Writer) Special(rel string, n *tree.Node) error {
	var mode uint32
	switch n.Type {
	case tree.TypeFIFO:
		mode = unix.S_IFIFO
	case tree.TypeCharDev:
		mode = unix.S_IFCHR
	case tree.TypeBlkDev:
		mode = unix.S_IFBLK
	case tree.TypeSocket:
		if _, _, err := splitRel(rel); err != nil {
			return err
		}
		w.opts.Logf("fsmeta: %s: sockets are not restored", rel)
		return nil
	default:
		return fmt.Errorf("fsmeta: special %s: not a special file type: %q", rel, n.Type)
	}
	if mode != unix.S_IFIFO && w.opts.NoDevices {
		if _, _, err := splitRel(rel); err != nil {
			return err
		}
		w.priv.devicesWithheld.Add(1)
		return nil
	}
	if mode != unix.S_IFIFO && !w.isRoot {
		if _, _, err := splitRel(rel); err != nil {
			return err
		}
		w.opts.Logf("fsmeta: %s: device not restored: needs root", rel)
		return nil
	}
	err := w.atParent(rel, func(dirfd int, base string) error {
		return unix.Mknodat(dirfd, base, mode|0o600, int(n.Rdev))
	})
	switch {
	case err == nil:
		if mode != unix.S_IFIFO {
			w.priv.devices.Add(1)
		}
		return nil
	case errors.Is(err, unix.EEXIST):
		return fmt.Errorf("fsmeta: mknod %s: %w", rel, ErrExists)
	case mode != unix.S_IFIFO && errors.Is(err, unix.EPERM):
		w.opts.Logf("fsmeta: %s: device not restored: %v", rel, err)
		return nil
	default:
		return fmt.Errorf("fsmeta: mknod %s: %w", rel, err)
	}
}

// atParent checks rel, opens its parent directory through the Root (so
// symlinks in the parents cannot lead outside; kept open for the next
// entries, see dirCache) and calls f with that directory's descriptor and
// the last element of rel.
func (w *Writer) atParent(rel string, f func(dirfd int, base string) error) error {
	dir, base, err := splitRel(rel)
	if err != nil {
		return err
	}
	parent, release, err := w.dirs.acquire(w.root, dir)
	if err != nil {
		return fmt.Errorf("open parent: %w", err)
	}
	defer release()
	conn, err := parent.SyscallConn()
	if err != nil {
		return fmt.Errorf("open parent: %w", err)
	}
	var ferr error
	if err := conn.Control(func(fd uintptr) { ferr = f(int(fd), base) }); err != nil {
		return err
	}
	return ferr
}
