//go:build !linux

package local

import "context"

// Flags returns 0: inode flags (FS_IOC_GETFLAGS) are Linux's. The chflags
// flags of macOS and FreeBSD come with the stat itself, and Windows's
// attributes with its lstat.
func (Source) Flags(context.Context, string) (uint32, error) { return 0, nil }
