//go:build unix

package dump

import "golang.org/x/sys/unix"

// devNumbers splits a device number into the major and minor numbers tar
// records, in this system's encoding of them.
func devNumbers(rdev uint64) (major, minor int64) {
	return int64(unix.Major(rdev)), int64(unix.Minor(rdev))
}
