//go:build unix

package fsmeta

// hostMapsNames is false: a Unix file name may hold any byte but "/" and
// NUL, which ValidName refuses already.
const hostMapsNames = false

// LocalName is the name a snapshot's name is restored under here: on Unix
// the name itself (changed is false).
func LocalName(name string) (local string, changed bool) { return name, false }

// FoldName is the key under which this host takes two names for one: on
// Unix each name is its own (ok is false: there is nothing to compare).
// A file system may fold case or normalization all the same (macOS, vfat,
// ext4 casefold): restore looks at its target for that (docs/platforms.md).
func FoldName(string) (key string, ok bool) { return "", false }
