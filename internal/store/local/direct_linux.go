package local

import (
	"errors"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Direct I/O for large objects.
//
// Why: a buffered write copies every byte into the page cache, and on the
// VMs this was measured on that copy (fresh page-cache pages, each one
// faulted in through the hypervisor) cost 0.8 s of system time per 640 MiB,
// a fifth of a 1 GB backup's CPU. The pack is fsynced at once anyway, so
// keeping its pages cached buys nothing during a backup, and evicting the
// user's working set for it is what borg avoids with fadvise(DONTNEED).
// With O_DIRECT the device reads the caller's buffer itself: 0.15 s.
//
// O_DIRECT wants the buffer's address, the file offset and the length to be
// multiples of the device's block size. directAlign (4 KiB) is a multiple of
// every common one; the repository's pack buffers are page-aligned mappings.
// The aligned prefix is written directly, the tail through the page cache.
// Whatever the file system refuses (tmpfs before Linux 6.6, some FUSE and
// network file systems, an unusual block size) is written the buffered way.
const (
	directAlign = 4096
	// directMin: below this, the copy is cheap and the extra fcntl calls
	// are not.
	directMin = 1 << 20
)

// writeData writes data to f, which is new, empty and open for writing.
// It does not sync.
func writeData(f *os.File, data []byte) error {
	n := directPrefix(data)
	if n == 0 || setDirect(f, true) != nil {
		_, err := f.Write(data)
		return err
	}
	written, err := f.Write(data[:n])
	// Whatever happened, the rest goes through the page cache: EINVAL means
	// the file system took the flag but not this write, and a real I/O
	// error will come back from the buffered write or from fsync.
	if serr := setDirect(f, false); serr != nil {
		return errors.Join(err, serr)
	}
	_, err = f.Write(data[written:])
	return err
}

// directPrefix is how many leading bytes of data can be written with
// O_DIRECT: 0 when data is small or not aligned in memory.
func directPrefix(data []byte) int {
	if len(data) < directMin || uintptr(unsafe.Pointer(unsafe.SliceData(data)))%directAlign != 0 {
		return 0
	}
	return len(data) &^ (directAlign - 1)
}

// setDirect turns O_DIRECT on or off for f's open file description.
func setDirect(f *os.File, on bool) error {
	raw, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var opErr error
	err = raw.Control(func(fd uintptr) {
		flags, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
		if err != nil {
			opErr = err
			return
		}
		if on {
			flags |= unix.O_DIRECT
		} else {
			flags &^= unix.O_DIRECT
		}
		_, opErr = unix.FcntlInt(fd, unix.F_SETFL, flags)
	})
	return errors.Join(err, opErr)
}
