package source

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"time"
)

// ErrLost means the source itself became unreachable (an SFTP connection
// dropped): nothing more can be read from it, so a backup must stop
// instead of recording every remaining entry as unreadable.
var ErrLost = errors.New("source lost")

// ErrNotDir means a source root is not a directory.
var ErrNotDir = errors.New("not a directory")

// Source is a tree backup reads. Paths are the source's own: absolute,
// slash-separated, as Root and ReadDir give them (joined with
// path/filepath on the local file system, where they are the same).
// FileInfos are lstat results: a symlink is never followed. Their Sys()
// is a *syscall.Stat_t on the local file system and a *Stat elsewhere.
// A Source is safe for concurrent use.
type Source interface {
	// Root resolves the root the user named (relative paths and "~" as
	// the source defines them; a root given as a symlink is followed).
	// Root's Info is that of the directory found.
	Root(ctx context.Context, name string) (Root, error)
	// Lstat describes the entry at path.
	Lstat(ctx context.Context, path string) (fs.FileInfo, error)
	// ReadDir lists a directory's entries, sorted by name; their Info is
	// an lstat result.
	ReadDir(ctx context.Context, path string) ([]fs.DirEntry, error)
	// Open opens a regular file for reading. It never waits for a
	// writer, should the entry have become a FIFO since it was listed.
	Open(ctx context.Context, path string) (File, error)
	// Readlink returns a symlink's target.
	Readlink(ctx context.Context, path string) (string, error)
	// Xattrs returns the extended attributes of the entry at path (not
	// following a symlink), sorted by name; none when the source or its
	// file system has no such thing.
	Xattrs(ctx context.Context, path string) ([]Xattr, error)
	// TimeGranularity is the coarsest step in which the source's
	// modification times move: two writes closer than this may leave
	// the same mtime.
	TimeGranularity() time.Duration
	// Close releases the source (an SFTP source's connection).
	Close() error
}

// Root is a resolved source root.
type Root struct {
	// Path is the root's absolute path as named (symlinks not resolved):
	// what snapshots record.
	Path string
	// Real is the path the root is read from (symlinks resolved).
	Real string
	// URI names the root with its source, as snapshots record it:
	// "local:/home/me" or "sftp://me@host:22/home/me".
	URI string
	// Info describes the root directory.
	Info fs.FileInfo
}

// File is an open regular file of a Source.
type File interface {
	io.Reader
	io.Seeker
	io.Closer
	// Stat describes the open file.
	Stat() (fs.FileInfo, error)
}

// Xattr is one extended attribute.
type Xattr struct {
	Name  string
	Value []byte
}

// Stat is the metadata of an entry of a source other than the local file
// system, as its FileInfo.Sys() returns it. Fields the source does not
// know are zero (SFTP has no change time, inode or device).
type Stat struct {
	// Mode holds the permission bits with setuid, setgid and sticky, in
	// their Unix positions (0o7777).
	Mode uint32
	// MTime and CTime are Unix nanoseconds.
	MTime, CTime         int64
	Device, Inode, Links uint64
	UID, GID             uint32
	// User and Group are the owners' names when the source tells them.
	User, Group string
	// Drive is what a cloud drive records of the entry; nil elsewhere.
	Drive *DriveRecord
}

// DriveRecord is a cloud drive's record of an entry, as tree.Cloud stores
// it: the item's id, its own name when the entry's differs, its checksum,
// media type and a shortcut's target id.
type DriveRecord struct {
	ID, Name, Hash, MIME, Target string
}

// StatOf returns fi's *Stat, or nil when fi's Sys() is something else.
func StatOf(fi fs.FileInfo) *Stat {
	st, _ := fi.Sys().(*Stat)
	return st
}
