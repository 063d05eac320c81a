package exclude

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"slices"

	"github.com/cloudstic/cloudstic/internal/source"
)

// Options are a backup's exclude rules.
type Options struct {
	// Patterns are lines in gitignore syntax (see NewMatcher).
	Patterns []string
	// IfPresent leaves out every directory holding an entry of one of
	// these names (e.g. ".nobackup").
	IfPresent []string
	// Caches leaves out every directory holding a CACHEDIR.TAG file that
	// starts with the signature of https://bford.info/cachedir/.
	Caches bool
	// LargerThan, when positive, leaves out regular files of more bytes.
	LargerThan int64
	// OneFileSystem does not descend into directories on another device
	// than the source root (mount points are kept, empty).
	OneFileSystem bool
}

// Decision is what a Filter decided for one directory entry.
type Decision int

const (
	// Keep backs the entry up (and, for a directory, what it holds).
	Keep Decision = iota
	// Skip leaves the entry out; a directory is not even opened.
	Skip
	// KeepEmpty keeps a directory but not what it holds: a mount point
	// under -one-file-system.
	KeepEmpty
)

// CacheDirTag is the name of the file that marks a cache directory, and
// cacheDirSignature what it must start with.
const (
	CacheDirTag       = "CACHEDIR.TAG"
	cacheDirSignature = "Signature: 8a477f597d28d172789f06886806bc55"
)

// Filter applies Options below one source root. It is safe for
// concurrent use.
type Filter struct {
	src     source.Source
	opts    Options
	m       *Matcher
	rootDev uint64
	// otherDevs are the devices of further roots (AddRoot).
	otherDevs []uint64
}

// NewFilter parses opts' patterns for a root of src whose metadata is
// root (its device decides -one-file-system). The tags of
// -exclude-if-present and -exclude-caches are looked for through src.
func NewFilter(opts Options, src source.Source, root fs.FileInfo) (*Filter, error) {
	m, err := NewMatcher(opts.Patterns)
	if err != nil {
		return nil, err
	}
	return &Filter{src: src, opts: opts, m: m, rootDev: Device(root)}, nil
}

// Entry decides for the entry d of the directory dir, at rel relative to
// the source root. It returns the entry's lstat metadata when it was
// needed (nil otherwise: patterns are decided on the name and type
// alone, so an excluded entry costs no system call), and the error of
// that lstat.
func (f *Filter) Entry(ctx context.Context, dir, rel string, d fs.DirEntry) (Decision, fs.FileInfo, error) {
	if f.m.Match(rel, d.IsDir()) {
		return Skip, nil, nil
	}
	fi, err := d.Info()
	if err != nil {
		return Skip, nil, err
	}
	switch {
	case fi.Mode().IsRegular():
		if f.opts.LargerThan > 0 && fi.Size() > f.opts.LargerThan {
			return Skip, fi, nil
		}
	case fi.IsDir():
		path := filepath.Join(dir, d.Name())
		if f.tagged(ctx, path) {
			return Skip, fi, nil
		}
		if f.opts.OneFileSystem && !f.rootDevice(Device(fi)) {
			return KeepEmpty, fi, nil
		}
	}
	return Keep, fi, nil
}

// AddRoot makes the device of root, a further root of the same backup,
// one that -one-file-system stays on. Call it before the Filter is used.
func (f *Filter) AddRoot(root fs.FileInfo) { f.otherDevs = append(f.otherDevs, Device(root)) }

// rootDevice says whether dev is the device of one of the roots.
func (f *Filter) rootDevice(dev uint64) bool {
	return dev == f.rootDev || slices.Contains(f.otherDevs, dev)
}

// tagged says whether the directory at path holds a -exclude-if-present
// name or, with -exclude-caches, a valid CACHEDIR.TAG.
func (f *Filter) tagged(ctx context.Context, path string) bool {
	for _, name := range f.opts.IfPresent {
		if _, err := f.src.Lstat(ctx, filepath.Join(path, name)); err == nil {
			return true
		}
	}
	return f.opts.Caches && f.isCacheDir(ctx, path)
}

// isCacheDir says whether dir holds a regular CACHEDIR.TAG file starting
// with the signature. An unreadable tag does not exclude: the backup then
// reports what it cannot read, rather than silently leaving it out.
func (f *Filter) isCacheDir(ctx context.Context, dir string) bool {
	path := filepath.Join(dir, CacheDirTag)
	if fi, err := f.src.Lstat(ctx, path); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	// Should a FIFO replace the tag after the Lstat, Open does not wait
	// for a writer, and Stat tells.
	fh, err := f.src.Open(ctx, path)
	if err != nil {
		return false
	}
	defer fh.Close() //nolint:errcheck // read-only
	if fi, err := fh.Stat(); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	buf := make([]byte, len(cacheDirSignature))
	if _, err := io.ReadFull(fh, buf); err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return false
	}
	return bytes.Equal(buf, []byte(cacheDirSignature))
}
