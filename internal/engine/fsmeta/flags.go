package fsmeta

import (
	"context"

	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// UserFlags are the inode flags (chattr) a backup records and a restore
// sets: the ones Linux lets users change (FS_FL_USER_MODIFIABLE), such as
// immutable (i), append-only (a), nodump (d), noatime (A), sync (S). The
// others describe the file system's own layout (extents, inline data,
// encryption) and are not the file's to carry.
const UserFlags uint32 = 0x000380FF

// UserBSDFlags are the chflags flags (st_flags) of macOS and FreeBSD a
// backup records and a restore sets: the owner's flags that mean the same
// on both, UF_NODUMP (0x1), UF_IMMUTABLE (0x2), UF_APPEND (0x4), UF_OPAQUE
// (0x8) and UF_HIDDEN (0x8000). The others are either the superuser's
// (SF_*), describe the storage (macOS's UF_COMPRESSED, which set without
// its data would make the file unreadable) or mean different things on
// the two systems.
const UserBSDFlags uint32 = 0x0000800F

// WinAttrMask are the Windows file attributes a backup records and a
// restore sets: FILE_ATTRIBUTE_READONLY (0x1), HIDDEN (0x2), SYSTEM (0x4),
// ARCHIVE (0x20) and NOT_CONTENT_INDEXED (0x2000). The others describe how
// the file is stored (compressed, encrypted, sparse, offline, a reparse
// point, a directory) and are not the file's to carry.
const WinAttrMask uint32 = 0x2027

// hasFlags says whether entries of type t can carry inode flags: reading
// them needs an open descriptor, which only regular files and directories
// give without side effects.
func hasFlags(t tree.Type) bool { return t == tree.TypeFile || t == tree.TypeDir }

// FlagSource is a source.Source that can read inode flags (the local
// file system). Entries of other sources have none.
type FlagSource interface {
	// Flags returns the inode flags (FS_IOC_GETFLAGS) of the regular file
	// or directory at path, not following a symlink; 0 when its file
	// system keeps none.
	Flags(ctx context.Context, path string) (uint32, error)
}

// flags returns the user-modifiable inode flags of the entry at path, when
// the source can read them.
func (c *Capturer) flags(ctx context.Context, path string) (uint32, error) {
	fs, ok := c.src.(FlagSource)
	if !ok {
		return 0, nil
	}
	f, err := fs.Flags(ctx, path)
	return f & UserFlags, err
}
