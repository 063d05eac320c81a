//go:build windows

package local

import (
	"os"

	"golang.org/x/sys/windows"

	"github.com/cloudstic/cloudstic/internal/winpath"
)

// Opening an object for reading, on Windows. FILE_FLAG_OPEN_REPARSE_POINT
// is Windows's O_NOFOLLOW: a symbolic link, junction or other reparse point
// is opened itself, not its target, and the caller (openObject) then sees
// on the handle that it is not a regular file and refuses it. Windows has
// no FIFOs or devices in the file system namespace, so an open never
// waits. FILE_FLAG_BACKUP_SEMANTICS lets a directory open, so that it is
// reported as absent like on Unix. FILE_SHARE_DELETE lets a writer replace
// or delete the object while it is being read (see files_windows.go).

// openNoFollow opens p read-only without following a reparse point at p.
func openNoFollow(p string) (*os.File, error) {
	name, err := windows.UTF16PtrFromString(winpath.Long(p))
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	h, err := windows.CreateFile(name, windows.GENERIC_READ,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil,
		windows.OPEN_EXISTING, windows.FILE_FLAG_OPEN_REPARSE_POINT|windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	return os.NewFile(uintptr(h), p), nil
}
