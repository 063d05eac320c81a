//go:build unix

package offheap

import "golang.org/x/sys/unix"

// Map returns size bytes of zeroed, readable and writable memory, backed
// by pages only once written.
func Map(size int) ([]byte, error) {
	return unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
}

// Unmap releases memory Map returned (all of it: b as Map returned it).
func Unmap(b []byte) error { return unix.Munmap(b) }
