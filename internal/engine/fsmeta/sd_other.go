//go:build !windows

package fsmeta

import "os"

// Security descriptors are Windows's (sd_windows.go): elsewhere a
// Capturer records none and a Writer ignores a node's SDDL.

// sdCapture is a Capturer's state for security descriptors: none here.
type sdCapture struct{}

// read records no security descriptor.
func (*sdCapture) read(string, func(string, ...any)) string { return "" }

// sdRestore is a Writer's state for security descriptors: none here.
type sdRestore struct{}

// mayRestoreOwners says whether the process may give files any owner.
func mayRestoreOwners() bool { return os.Geteuid() == 0 }
