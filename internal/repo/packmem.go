package repo

import (
	"sync"

	"github.com/cloudstic/cloudstic/internal/repo/offheap"
)

// packMemory allocates a Saver's data pack buffers outside the Go heap.
//
// Why: the garbage collector lets the heap grow to twice what is live
// before it collects (GOGC=100). Two or three 16 MiB pack buffers, live
// for a whole backup, made up most of the live heap, so they also set the
// room left for garbage: a 55,000-file backup peaked at 112 MiB with ~47
// MiB live. Mapped memory is not counted, so the heap's target follows
// the small objects only. Pages are backed when first written (a backup
// that changes one small file touches a few), and are advised onto huge
// pages: in a VM, every 4 KiB fault traps to the hypervisor. Mappings are
// page-aligned, which lets the local store write packs with O_DIRECT.
//
// The buffers are unmapped by free, once nothing can use them: Flush and
// Abort call it after the uploaders stopped, and Save must not run
// concurrently with them (as before: the uploads channel is closed). A
// buffer asked for after free, or when the kernel refuses a mapping, comes
// from the heap.
type packMemory struct {
	mu      sync.Mutex
	regions [][]byte // mapped, to unmap
	freed   bool
}

// alloc returns an empty buffer with capacity size.
func (m *packMemory) alloc(size int) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.freed || size <= 0 {
		return make([]byte, 0, size)
	}
	buf, err := offheap.Map(size)
	if err != nil {
		return make([]byte, 0, size) // the heap serves as well, only less frugally
	}
	offheap.AdviseHugePages(buf)
	m.regions = append(m.regions, buf)
	return buf[:0]
}

// free unmaps every buffer alloc mapped. Calling it again does nothing.
func (m *packMemory) free() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, buf := range m.regions {
		// Munmap fails only for an address that is not a mapping of ours;
		// there is nothing to do about it but not to crash the backup.
		_ = offheap.Unmap(buf) // see above
	}
	m.regions = nil
	m.freed = true
}
