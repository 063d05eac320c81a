package tree

import "fmt"

// The bounds of a snapshot's trees (docs/format.md, "Tree bounds"). No file
// system backup can read produces trees outside them, so a reader may
// refuse such trees instead of recursing or expanding without end.
const (
	// MaxDepth is the most path components an entry of a snapshot may
	// have: a directory at depth MaxDepth holds no entries. Linux's
	// PATH_MAX of 4096 bytes fits at most 2048 levels of one-character
	// names, and backup reads entries by their full path, so real
	// snapshots stay far below it.
	MaxDepth = 4096
	// MaxEntries is the most entries a walk of one snapshot may meet,
	// counting an entry once per path that reaches it: a tree shared by
	// several directories counts once for each. An ext4 file system holds
	// at most 2^32 inodes; snapshots of 100 million files use 2.5 % of
	// it. Only trees shared on purpose (a directory holding two entries
	// that both point at the next, forty levels down) expand beyond it.
	MaxEntries = 1 << 32
)

// ErrTooDeep means directories are nested deeper than MaxDepth.
var ErrTooDeep = fmt.Errorf("directories nested deeper than %d levels", MaxDepth)

// ErrTooManyEntries means a walk would meet more than MaxEntries entries.
var ErrTooManyEntries = fmt.Errorf("expands to more than %d entries: its trees are shared in a way no file system produces", int64(MaxEntries))
