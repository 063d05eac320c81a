package fsmeta

import "golang.org/x/sys/unix"

// The system calls FreeBSD does its own way, for the Unix writer.

// utimeOmit is the nanoseconds of a utimensat time that leaves it alone.
const utimeOmit = unix.UTIME_OMIT

// xattrOpenFlags open an entry for its xattrs: O_NOFOLLOW refuses a
// symlink (FreeBSD's extattr_set_link has no *at form), O_NONBLOCK keeps a
// FIFO from waiting.
const xattrOpenFlags = unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_CLOEXEC

// symlinkXattrs: FreeBSD cannot open a symlink itself.
const symlinkXattrs = false

// renameNoReplace renames from to to in dirfd unless to exists (EEXIST):
// FreeBSD's renameat has no such flag, and a link fails if to exists.
func renameNoReplace(dirfd int, from, to string) error { return linkThenUnlink(dirfd, from, to) }

// mknodAt creates the FIFO or device base in dirfd (FreeBSD's mknodat
// makes a FIFO of S_IFIFO itself).
func mknodAt(dirfd int, base string, mode uint32, rdev uint64) error {
	return unix.Mknodat(dirfd, base, mode, rdev)
}
