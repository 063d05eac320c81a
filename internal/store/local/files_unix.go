//go:build unix

package local

import (
	"context"
	"errors"
	"os"
	"syscall"
)

// How a finished temporary file becomes an object, on Unix.

// createNew gives the temporary file tmp the name p unless p exists:
// link(2) fails atomically with EEXIST (fs.ErrExist) if it does, also on
// NFS, where O_EXCL was not atomic on old clients. The caller removes tmp.
func createNew(tmp, p string) error { return os.Link(tmp, p) }

// replace renames tmp onto p: rename(2) replaces atomically, so a reader
// sees the old object or the new one, never neither. It never waits.
func replace(_ context.Context, tmp, p string) error { return os.Rename(tmp, p) }

// syncDir makes the directory entries of dir durable (fsync on the
// directory), after a link, rename or remove in it.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close() //nolint:errcheck // a directory handle: Sync is what makes the entry durable
	return d.Sync()
}

// lockFile takes an exclusive flock(2) on f, waiting for it, and returns
// the function that releases it. flock belongs to f's open file
// description, so two opens in one process exclude each other.
func lockFile(f *os.File) (func(), error) {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return nil, err
	}
	// Closing f releases the lock; no explicit unlock is needed.
	return func() {}, nil
}

// isDirError says whether err is a read from a directory.
func isDirError(err error) bool { return errors.Is(err, syscall.EISDIR) }
