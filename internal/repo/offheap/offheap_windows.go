package offheap

import (
	"unsafe"

	"golang.org/x/sys/windows"
)

// Map returns size bytes of zeroed, readable and writable memory,
// committed by VirtualAlloc: Windows charges it to the commit limit at
// once, but backs pages with memory only once they are written.
func Map(size int) ([]byte, error) {
	addr, err := windows.VirtualAlloc(0, uintptr(size), windows.MEM_RESERVE|windows.MEM_COMMIT, windows.PAGE_READWRITE)
	if err != nil {
		return nil, err
	}
	// The address of memory the Go runtime does not manage: converted
	// through a pointer to it, so that vet sees no uintptr arithmetic.
	p := *(*unsafe.Pointer)(unsafe.Pointer(&addr))
	return unsafe.Slice((*byte)(p), size), nil
}

// Unmap releases memory Map returned (all of it: b as Map returned it).
func Unmap(b []byte) error {
	return windows.VirtualFree(uintptr(unsafe.Pointer(unsafe.SliceData(b))), 0, windows.MEM_RELEASE)
}
