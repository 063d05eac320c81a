package fsmeta

import "syscall"

// statOf is Linux's stat layout. Linux's statx has a birth time, but
// lstat does not, and the caller's stat came from lstat: none is recorded.
// Linux has no st_flags (its inode flags come from an ioctl: FlagSource).
func statOf(st *syscall.Stat_t) unixStat {
	return unixStat{
		mode: st.Mode, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(),
		dev: st.Dev, ino: st.Ino, nlink: uint64(st.Nlink), //nolint:unconvert // Nlink is uint32 on arm64
		rdev: st.Rdev, uid: st.Uid, gid: st.Gid, size: st.Size,
	}
}
