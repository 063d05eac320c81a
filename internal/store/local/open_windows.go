//go:build windows

package local

import (
	"errors"
	"fmt"
	"os"
)

// Opening an object for reading, on Windows, which has no O_NOFOLLOW: the
// name is looked at first (os.Lstat reports symbolic links, junctions and
// other reparse points as not regular), and the caller checks the opened
// file again (openObject). A reparse point swapped in between the two is
// still read as a regular file of bounded size, never followed to a
// device: Windows has no FIFOs in the file system namespace.
//
// For the porter: ReadRange (rangeread.go) reads with Unix system calls;
// its Windows version must refuse non-regular files the same way.

// openNoFollow opens p read-only unless p is not a regular file or a
// directory.
func openNoFollow(p string) (*os.File, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() && !fi.IsDir() {
		return nil, fmt.Errorf("%s: %w", p, errNotFollowed)
	}
	return os.Open(p)
}

// errNotFollowed: openNoFollow found a link or another special file;
// openError describes it after its own Lstat.
var errNotFollowed = errors.New("not a regular file or directory")
