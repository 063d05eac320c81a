//go:build unix

package fsmeta

// hostNameError is nil: a Unix file name may hold any byte but "/" and
// NUL, which ValidName refuses already.
func hostNameError(string) error { return nil }

// LocalName is the name a snapshot's name is restored under here: on Unix
// the name itself (changed is false).
func LocalName(name string) (local string, changed bool) { return name, false }
