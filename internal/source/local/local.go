package local

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/cloudstic/cloudstic/internal/source"
)

// Source reads the local file system. The zero value is ready to use.
type Source struct{}

var _ source.Source = Source{}

// New returns the local file system as a source.
func New() Source { return Source{} }

// Root makes name absolute (relative to the working directory), follows it
// if it is a symlink, and checks that it is a directory.
func (Source) Root(_ context.Context, name string) (source.Root, error) {
	abs, err := filepath.Abs(name)
	if err != nil {
		return source.Root{}, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return source.Root{}, err
	}
	fi, err := os.Lstat(real)
	if err != nil {
		return source.Root{}, err
	}
	if !fi.IsDir() {
		return source.Root{}, fmt.Errorf("%s: %w", abs, source.ErrNotDir)
	}
	return source.Root{Path: abs, Real: real, URI: "local:" + abs, Info: fi}, nil
}

// Lstat is os.Lstat.
func (Source) Lstat(_ context.Context, path string) (fs.FileInfo, error) { return os.Lstat(path) }

// ReadDir is os.ReadDir: the entries' Info costs one lstat each, made only
// when asked for.
func (Source) ReadDir(_ context.Context, path string) ([]fs.DirEntry, error) { return os.ReadDir(path) }

// Open opens path read-only. O_NONBLOCK: should a FIFO replace the file
// after it was listed, opening it does not wait for a writer (it has no
// effect on reading regular files).
func (Source) Open(_ context.Context, path string) (source.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Readlink is os.Readlink.
func (Source) Readlink(_ context.Context, path string) (string, error) { return os.Readlink(path) }

// Xattrs reads path's extended attributes (see readXattrs).
func (Source) Xattrs(_ context.Context, path string) ([]source.Xattr, error) { return readXattrs(path) }

// TimeGranularity is the step of Linux file timestamps: they come from the
// kernel's coarse clock, which moves once per scheduler tick (1 to 10 ms).
// File systems with coarser timestamps (FAT's 2 s) are not told apart.
func (Source) TimeGranularity() time.Duration { return 10 * time.Millisecond }

// Close does nothing.
func (Source) Close() error { return nil }
