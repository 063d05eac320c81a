package restore

import (
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/offheap"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
)

// bufferSize is the size of each of a worker's large buffers: a range of
// a pack read for a run of chunks or a batch (at most maxBatchSpan), and a
// decoded chunk (at most 8 MiB by default, plus its sealing). Larger blobs
// grow a buffer on the heap.
const bufferSize = maxBatchSpan + 1<<20

// writeBuffers are one worker's reusable buffers: the decoder's (one
// chunk's decompressed form, reused for the next chunk and file instead of
// allocated, and zeroed by the kernel, for each), the range of a pack read
// for a file's chunks or a batch, and a block of zeros to find holes with.
//
// The large ones are mapped outside the Go heap, as the backup's pack
// buffers are (repo/packmem.go): on the heap, live buffers raise the
// collector's target and so the garbage let grow with them, and every
// 4 KiB page of fresh heap memory faults into the hypervisor on these VMs;
// a mapping is backed when first touched, on huge pages where the kernel
// allows. They are mapped on first use and unmapped by free, after the
// worker's last use.
type writeBuffers struct {
	dec     *pack.Decoder // set on first use
	span    []byte        // a range of a pack; nil until first used
	zeros   []byte
	regions [][]byte // mapped, to unmap
}

func newWriteBuffers() *writeBuffers {
	return &writeBuffers{zeros: make([]byte, holeBlock)}
}

func (b *writeBuffers) decoder(r *repo.Repository) *pack.Decoder {
	if b.dec == nil {
		// Chunks are decrypted in place in the range read (DecodeInPlace),
		// so only the decompressed form needs a buffer of its own.
		b.dec = r.Codec().NewDecoderWith(nil, b.alloc(bufferSize))
	}
	return b.dec
}

// packBuffer returns the buffer for ranges of packs.
func (b *writeBuffers) packBuffer() *[]byte {
	if b.span == nil {
		b.span = b.alloc(bufferSize)
	}
	return &b.span
}

// alloc returns an empty buffer with capacity size, mapped when the kernel
// allows, else from the heap.
func (b *writeBuffers) alloc(size int) []byte {
	buf, err := offheap.Map(size)
	if err != nil {
		return make([]byte, 0, size)
	}
	offheap.AdviseHugePages(buf)
	b.regions = append(b.regions, buf)
	return buf[:0]
}

// free unmaps the mapped buffers; b must not be used afterwards.
func (b *writeBuffers) free() {
	for _, buf := range b.regions {
		// Munmap fails only for an address that is not a mapping of
		// ours; nothing to do about it but not to crash the restore.
		_ = offheap.Unmap(buf) // see above
	}
	*b = writeBuffers{}
}
