package pack

// Buffers is a bounded free list of byte slices. Unlike a sync.Pool, it
// keeps its buffers across garbage collections: a backup seals every blob
// through a few large buffers, and when a collection emptied the pool they
// were allocated again, which was most of the garbage that drove a 1 GB
// backup's heap (and peak RSS) up. Safe for concurrent use.
type Buffers struct{ free chan []byte }

// NewBuffers returns a free list that keeps at most n buffers.
func NewBuffers(n int) *Buffers { return &Buffers{free: make(chan []byte, max(n, 1))} }

// Get returns an empty buffer with room for at least size bytes.
func (b *Buffers) Get(size int) []byte {
	select {
	case buf := <-b.free:
		if cap(buf) >= size {
			return buf[:0]
		}
	default:
	}
	return make([]byte, 0, size)
}

// Put gives buf back for reuse; it is dropped when the list is full (and
// nil is ignored).
func (b *Buffers) Put(buf []byte) {
	if cap(buf) == 0 {
		return
	}
	select {
	case b.free <- buf[:0]:
	default:
	}
}
