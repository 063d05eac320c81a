package restore

import (
	"sync"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/offheap"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
)

// bufferSize is the size of each large buffer: a range of a pack read for
// a run of chunks or a batch (at most maxBatchSpan), and a decoded chunk
// (at most 8 MiB by default, plus its sealing). Larger blobs grow a buffer
// on the heap.
const bufferSize = maxBatchSpan + 1<<20

// The large buffers are mapped outside the Go heap, as the backup's pack
// buffers are (repo/packmem.go): on the heap, live buffers raise the
// collector's target and so the garbage let grow with them, and every
// 4 KiB page of fresh heap memory faults into the hypervisor on these VMs;
// a mapping is backed when first touched, on huge pages where the kernel
// allows and the restore asks for them (restoreShape). Only the pages
// touched count in a restore's memory: a buffer holds as much as the
// largest range or chunk it was used for, rounded up to its pages.

// writeBuffers are one worker's reusable buffers: the range of a pack read
// for a file's chunks or a batch, and a block of zeros to find holes with.
// The range's buffer is mapped on first use and unmapped by free, after the
// worker's last use.
type writeBuffers struct {
	span   []byte // a range of a pack; nil until first used
	zeros  []byte
	region []byte // mapped, to unmap
	huge   bool   // map span on huge pages
}

// newWriteBuffers returns a worker's buffers; huge maps its range's
// buffer on huge pages.
func newWriteBuffers(huge bool) *writeBuffers {
	return &writeBuffers{zeros: make([]byte, holeBlock), huge: huge}
}

// packBuffer returns the buffer for ranges of packs.
func (b *writeBuffers) packBuffer() *[]byte {
	if b.span == nil {
		b.span, b.region = mapBuffer(bufferSize, b.huge)
	}
	return &b.span
}

// free unmaps the mapped buffer; b must not be used afterwards.
func (b *writeBuffers) free() {
	unmap(b.region)
	*b = writeBuffers{}
}

// decoderPool lends the workers decoders, each with the buffer it
// decompresses chunks into (reused for the next chunk, instead of
// allocated and zeroed by the kernel for each). A worker holds one from a
// chunk's decoding until its plaintext is written. A restore from a store
// across a network runs more workers than cores, most of them waiting for
// a range of a pack: each needs a buffer for its range, but only those
// decoding need a decompression buffer, so there are at most max decoders,
// not one per worker.
type decoderPool struct {
	r    *repo.Repository
	max  int
	huge bool // map buffers on huge pages
	idle chan *pack.Decoder

	mu      sync.Mutex
	made    int
	regions [][]byte // mapped, to unmap
}

// newDecoderPool returns a pool of at most n decoders of r's codec; huge
// maps their buffers on huge pages.
func newDecoderPool(r *repo.Repository, n int, huge bool) *decoderPool {
	n = max(n, 1)
	return &decoderPool{r: r, max: n, huge: huge, idle: make(chan *pack.Decoder, n)}
}

// get returns an idle decoder, a new one while fewer than max exist, or
// else the next one put back. It does not wait for anything else: every
// holder puts its decoder back after one chunk's decoding and writing.
func (p *decoderPool) get() *pack.Decoder {
	select {
	case dec := <-p.idle:
		return dec
	default:
	}
	p.mu.Lock()
	if p.made < p.max {
		p.made++
		buf, region := mapBuffer(bufferSize, p.huge)
		if region != nil {
			p.regions = append(p.regions, region)
		}
		p.mu.Unlock()
		// Chunks are decrypted in place in the range read
		// (DecodeInPlace), so only the decompressed form needs a buffer
		// of the decoder's own.
		return p.r.Codec().NewDecoderWith(nil, buf)
	}
	p.mu.Unlock()
	return <-p.idle
}

// put gives back a decoder get returned.
func (p *decoderPool) put(dec *pack.Decoder) { p.idle <- dec }

// free unmaps the decoders' buffers, once no worker uses the pool.
func (p *decoderPool) free() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, region := range p.regions {
		unmap(region)
	}
	p.regions = nil
}

// mapBuffer returns an empty buffer with capacity size, mapped when the
// kernel allows (region is then the mapping, to unmap), else from the heap
// (region nil); huge asks for huge pages.
func mapBuffer(size int, huge bool) (buf, region []byte) {
	region, err := offheap.Map(size)
	if err != nil {
		return make([]byte, 0, size), nil
	}
	if huge {
		offheap.AdviseHugePages(region)
	}
	return region[:0], region
}

// unmap unmaps a region mapBuffer returned; nil is no mapping.
func unmap(region []byte) {
	if region == nil {
		return
	}
	// Munmap fails only for an address that is not a mapping of ours;
	// nothing to do about it but not to crash the restore.
	_ = offheap.Unmap(region) // see above
}
