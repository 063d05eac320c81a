package crypt

import (
	"os"
	"runtime"

	"golang.org/x/crypto/argon2"

	"github.com/cloudstic/cloudstic/internal/repo/offheap"
)

// passwordKey runs argon2id with the slot's parameters.
//
// argon2 reads each block of its freshly allocated (never touched) memory
// before writing it, so every 4 KiB page faulted twice: the shared zero
// page mapped on the read, then copied on the write, with a TLB flush on
// every thread of the process. perf showed those faults as 30 % of the CPU
// of a no-change backup. Writing one byte per page of a buffer of the same
// size first, and collecting it, makes the runtime hand argon2 pages that
// are already resident: the (then 64 MiB) KDF got 0.13 s faster per
// command, with the same peak RSS. The buffer is also advised to use
// transparent huge pages: 16 faults instead of 8,192 for 32 MiB, and
// argon2's random reads over its memory miss the TLB far less. Paired runs
// of the 32 MiB KDF alone: 0.198 -> 0.107 s.
func passwordKey(secret []byte, kdf *KDFParams) []byte {
	prefault(int(kdf.Memory) * 1024)
	return argon2.IDKey(secret, kdf.Salt, kdf.Time, kdf.Memory, kdf.Threads, 32)
}

// prefault writes to every page of an n-byte heap buffer, backed by huge
// pages where the kernel allows, and frees it.
func prefault(n int) {
	pageSize := os.Getpagesize()
	warm := make([]byte, n)
	offheap.AdviseHugePages(warm) // only advice, and only on Linux
	for i := 0; i < len(warm); i += pageSize {
		warm[i] = 1
	}
	runtime.KeepAlive(warm)
	warm = nil //nolint:ineffassign,wastedassign // drops the last reference before the collection
	runtime.GC()
}
