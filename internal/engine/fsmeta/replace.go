package fsmeta

import (
	"errors"

	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// ErrIsDir reports that an entry to be replaced or removed is a directory:
// Remove never removes one (RemoveAll does, when asked to).
var ErrIsDir = errors.New("fsmeta: entry is a directory")

// ErrNoUnnamed means the file system cannot create unnamed files
// (O_TMPFILE, Linux only): use a temporary name instead.
var ErrNoUnnamed = errors.New("fsmeta: unnamed files not supported here")

// Existing is what Lstat found at a path: enough to decide whether a
// restore may keep, replace or must leave the entry alone.
type Existing struct {
	Size  int64
	MTime int64 // nanoseconds since the epoch
	// Dev and Ino identify the file (both 0 where the platform does not
	// tell them without opening it: Windows).
	Dev uint64
	Ino uint64
	typ tree.Type
}

// Type is the kind of the entry, as a snapshot names it.
func (e *Existing) Type() tree.Type { return e.typ }
