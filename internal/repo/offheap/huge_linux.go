package offheap

import "golang.org/x/sys/unix"

// AdviseHugePages asks the kernel to back b with transparent huge pages:
// in a VM every 4 KiB fault traps to the hypervisor. Only advice: a kernel
// without transparent huge pages, or with them off, refuses it or ignores
// it, and the pages are simply small.
func AdviseHugePages(b []byte) {
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE) // advice only, see above
}
