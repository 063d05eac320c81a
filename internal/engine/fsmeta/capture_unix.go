//go:build unix

package fsmeta

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// localStat fills a node from the *syscall.Stat_t the local file system's
// lstat gave, whose layout each Unix has its own of (statOf).
func (c *Capturer) localStat(path string, fi fs.FileInfo) (tree.Node, error) {
	sys, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return tree.Node{}, fmt.Errorf("fsmeta: capture %s: %w", path, errNoStat)
	}
	st := statOf(sys)
	n := tree.Node{
		Name:      filepath.Base(path),
		Mode:      st.mode & 0o7777,
		MTime:     st.mtime,
		CTime:     st.ctime,
		BirthTime: st.btime,
		Device:    st.dev,
		Inode:     st.ino,
		Links:     st.nlink,
		UID:       st.uid,
		GID:       st.gid,
		User:      c.names.user(st.uid),
		Group:     c.names.group(st.gid),
	}
	switch st.mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		n.Type = tree.TypeFile
		n.Size = uint64(st.size)
	case syscall.S_IFDIR:
		n.Type = tree.TypeDir
	case syscall.S_IFLNK:
		n.Type = tree.TypeSymlink
	case syscall.S_IFIFO:
		n.Type = tree.TypeFIFO
	case syscall.S_IFCHR:
		n.Type = tree.TypeCharDev
		n.Rdev = st.rdev
	case syscall.S_IFBLK:
		n.Type = tree.TypeBlkDev
		n.Rdev = st.rdev
	case syscall.S_IFSOCK:
		n.Type = tree.TypeSocket
	default:
		return tree.Node{}, fmt.Errorf("fsmeta: capture %s: unknown file type %#o", path, st.mode&syscall.S_IFMT)
	}
	if c.flagsWanted(n.Type) {
		n.BSDFlags = st.flags & UserBSDFlags // 0 on Linux: FlagSource reads its flags
	}
	return n, nil
}

// unixStat is the part of a stat result a node records, in one layout
// for every Unix.
type unixStat struct {
	mode                uint32
	mtime, ctime, btime int64 // Unix nanoseconds; btime 0 when unknown
	dev, ino, nlink     uint64
	rdev                uint64
	uid, gid            uint32
	size                int64
	flags               uint32 // st_flags (chflags) where there are any
}

// isNotSupported reports the errors that mean a file system has no xattrs.
func isNotSupported(err error) bool {
	return errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EOPNOTSUPP)
}
