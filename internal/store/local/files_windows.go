//go:build windows

package local

import (
	"context"
	"errors"
	"os"
	"time"

	"golang.org/x/sys/windows"

	"github.com/cloudstic/cloudstic/internal/winpath"
)

// How a finished temporary file becomes an object, on Windows.
//
// Both moves are MoveFileExW in one directory, which NTFS performs as one
// journaled metadata operation: the name shows the old object or the new
// one, never neither and never a partly written file. MOVEFILE_WRITE_THROUGH
// makes the call return only once the move is on disk, which stands in for
// the directory fsync of Unix (Windows cannot flush a directory handle).
//
// Windows refuses to replace or delete a file another handle holds open
// without FILE_SHARE_DELETE. The store's own readers open objects with it
// (openNoFollow), so they never block a writer; another program holding an
// object open (a virus scanner, an indexer) makes the write fail with an
// error rather than wait.

// createNew gives the temporary file tmp the name p unless p exists:
// MoveFileExW without MOVEFILE_REPLACE_EXISTING fails atomically with
// ERROR_ALREADY_EXISTS (fs.ErrExist) if it does. Unlike a hard link it
// also works on FAT and exFAT drives.
func createNew(tmp, p string) error {
	return move(tmp, p, windows.MOVEFILE_WRITE_THROUGH)
}

// replace renames tmp onto p, replacing it: what os.Rename does on
// Windows (MOVEFILE_REPLACE_EXISTING), written through to disk. Windows
// (before POSIX semantics) and Wine refuse to replace a file some handle
// holds open, even one that allows deletion: a reader of the object at
// that moment. Readers hold objects for the time of one read, so the
// replace is tried again, after a growing pause, up to replaceTries times
// or until ctx ends.
func replace(ctx context.Context, tmp, p string) error {
	pause := time.Millisecond
	for try := 1; ; try++ {
		err := move(tmp, p, windows.MOVEFILE_REPLACE_EXISTING|windows.MOVEFILE_WRITE_THROUGH)
		if !errors.Is(err, windows.ERROR_ACCESS_DENIED) && !errors.Is(err, windows.ERROR_SHARING_VIOLATION) || try == replaceTries {
			return err
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(err, ctx.Err())
		case <-t.C:
		}
		pause = min(2*pause, 100*time.Millisecond)
	}
}

// replaceTries bounds replace's attempts: with its pauses, about 2 s.
const replaceTries = 25

// move is MoveFileExW(from, to, flags), with the error as os.Rename reports it.
func move(from, to string, flags uint32) error {
	f, err := windows.UTF16PtrFromString(winpath.Long(from))
	if err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	t, err := windows.UTF16PtrFromString(winpath.Long(to))
	if err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	if err := windows.MoveFileEx(f, t, flags); err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}

// syncDir does nothing: the moves above are written through already.
func syncDir(string) error { return nil }

// lockFile takes an exclusive LockFileEx lock on the first byte of f,
// waiting for it, and returns the function that releases it. Windows locks
// belong to the handle, so two opens in one process exclude each other.
// Closing a handle releases its locks only eventually, so the returned
// function unlocks explicitly before the caller closes f.
func lockFile(f *os.File) (func(), error) {
	h := windows.Handle(f.Fd())
	if err := windows.LockFileEx(h, windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, new(windows.Overlapped)); err != nil {
		return nil, err
	}
	return func() {
		// A failed unlock is released by the close that follows.
		_ = windows.UnlockFileEx(h, 0, 1, 0, new(windows.Overlapped)) // see above
	}, nil
}
