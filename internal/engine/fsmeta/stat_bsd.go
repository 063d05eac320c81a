//go:build darwin || freebsd

package fsmeta

import "syscall"

// statOf is the stat layout of macOS and FreeBSD: the same field names,
// with a birth time and the chflags flags (st_flags) in the stat itself.
// Dev and Rdev are int32 on macOS (the bits are the id) and Nlink a
// uint16: the conversions are needed there, not on FreeBSD.
//
//nolint:gosec,unconvert // see above
func statOf(st *syscall.Stat_t) unixStat {
	return unixStat{
		mode:  uint32(st.Mode),
		mtime: st.Mtimespec.Nano(),
		ctime: st.Ctimespec.Nano(),
		btime: st.Birthtimespec.Nano(),
		dev:   uint64(st.Dev),
		ino:   st.Ino,
		nlink: uint64(st.Nlink),
		rdev:  uint64(st.Rdev),
		uid:   st.Uid,
		gid:   st.Gid,
		size:  st.Size,
		flags: st.Flags,
	}
}
