//go:build !windows

package config

import "io/fs"

// othersMayAccess returns the permission bits of mode that let users other
// than the owner read or write the file.
func othersMayAccess(mode fs.FileMode) fs.FileMode { return mode.Perm() & 0o077 }
