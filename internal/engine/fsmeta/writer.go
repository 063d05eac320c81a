package fsmeta

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// WriterOptions configures a Writer.
type WriterOptions struct {
	// Owners restores owners and groups: chown, which needs root; on
	// Windows the owner and group of a security descriptor, which need
	// SeRestorePrivilege. See DefaultWriterOptions.
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
// otherwise: owners are restored when the process may set any (root; on
// Windows, SeRestorePrivilege).
func DefaultWriterOptions() WriterOptions {
	return WriterOptions{Owners: mayRestoreOwners()}
}

// Writer creates entries below one output directory and applies their
// metadata, never writing outside it. Every rel argument is a
// slash-separated path relative to the output directory whose elements
// each pass ValidName, as the snapshot names it: the entry is written at
// HostRel(rel), which differs on Windows for names Windows cannot hold.
// Safe for concurrent use.
type Writer struct {
	root   *os.Root
	dirs   dirCache // the open parents of recent entries (Unix)
	opts   WriterOptions
	isRoot bool
	ids    *localIDs
	priv   privilegeCounters
	sd     sdRestore // security descriptors (Windows)
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
	return &Writer{root: root, opts: opts, isRoot: os.Geteuid() == 0, ids: newLocalIDs(), sd: sdRestore{}}
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
	rel = HostRel(rel) // the name it has here
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

// Symlink creates rel as a symlink to n.LinkTarget, stored as is (even
// absolute or climbing out with ".."): the link is never followed here.
func (w *Writer) Symlink(rel string, n *tree.Node) error {
	rel = HostRel(rel) // the name it has here
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
	existingRel = HostRel(existingRel) // the name it has here
	rel = HostRel(rel)                 // the name it has here
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
