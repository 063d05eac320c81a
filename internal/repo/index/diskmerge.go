package index

import (
	"bufio"
	"bytes"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// Writing an on-disk index: sealed blocks of items, and the merge of
// sorted sources (run files, an older on-disk index) into one order.

// blockWriter writes items of size bytes, per to a block, as sealed
// blocks (see the layout in disk.go).
type blockWriter struct {
	w       io.Writer
	sealer  Sealer
	per     int
	size    int
	onFlush func(items []byte) // sees each block's items before it is written
	payload [payloadSize]byte
	n       int
	total   uint64
}

func (bw *blockWriter) add(item []byte) error {
	copy(bw.payload[4+bw.n*bw.size:], item)
	bw.n++
	bw.total++
	if bw.n < bw.per {
		return nil
	}
	return bw.flush()
}

// flush writes the items held, if any, as one block.
func (bw *blockWriter) flush() error {
	if bw.n == 0 {
		return nil
	}
	binary.LittleEndian.PutUint32(bw.payload[:], uint32(bw.n))
	if bw.onFlush != nil {
		bw.onFlush(bw.payload[4:])
	}
	var blk [blockSize]byte
	sealed, err := bw.sealer.Seal(blk[:0], bw.payload[:])
	if err != nil {
		return err
	}
	if len(sealed) > crcOffset || &sealed[0] != &blk[0] {
		return fmt.Errorf("index: a sealed block of %d bytes does not fit", len(sealed))
	}
	sealBlock(blk[:])
	clear(bw.payload[:])
	bw.n = 0
	_, err = bw.w.Write(blk[:])
	return err
}

// A source yields entries in blob id order.
type source interface {
	next() (entry, bool, error)
}

// runSource reads a run file from its start.
type runSource struct {
	f *os.File
	r *bufio.Reader
}

func newRunSource(f *os.File) *runSource { return &runSource{f: f} }

func (s *runSource) next() (entry, bool, error) {
	if s.r == nil {
		if _, err := s.f.Seek(0, io.SeekStart); err != nil {
			return entry{}, false, err
		}
		s.r = bufio.NewReaderSize(s.f, ioBuffer/2)
	}
	var rec [diskRecord]byte
	switch _, err := io.ReadFull(s.r, rec[:]); {
	case errors.Is(err, io.EOF):
		return entry{}, false, nil
	case err != nil:
		return entry{}, false, fmt.Errorf("reading a sorted run: %w", err)
	}
	return decodeRecord(rec[:]), true, nil
}

// offsetSource shifts the pack positions of a run's entries past a base's
// pack table.
type offsetSource struct {
	source
	offset uint32
}

func (s *offsetSource) next() (entry, bool, error) {
	e, ok, err := s.source.next()
	e.pack += s.offset
	return e, ok, err
}

// diskSource reads an on-disk index's records in order.
type diskSource struct {
	d     *Disk
	blk   [blockSize]byte
	recs  []byte // the items of blk
	block uint64
	i, n  int
}

func newDiskSource(d *Disk) *diskSource { return &diskSource{d: d} }

func (s *diskSource) next() (entry, bool, error) {
	if s.i == s.n {
		if s.block == s.d.l.recordBlocks {
			return entry{}, false, nil
		}
		recs, n, err := s.d.readBlock(&s.blk, blockSize, s.block, s.d.l.entries, recordsPerBlock, diskRecord)
		if err != nil {
			return entry{}, false, err
		}
		s.block++
		s.recs, s.i, s.n = recs, 0, n
	}
	e := decodeRecord(s.recs[s.i*diskRecord:])
	s.i++
	return e, true, nil
}

// mergeSources calls emit with every entry of srcs in blob id order; of
// equal ids, the entry of the earlier source comes first.
func mergeSources(srcs []source, emit func(*entry) error) error {
	h := make(mergeHeap, 0, len(srcs))
	for i, s := range srcs {
		e, ok, err := s.next()
		if err != nil {
			return err
		}
		if ok {
			h = append(h, mergeItem{e: e, src: i})
		}
	}
	heap.Init(&h)
	for len(h) > 0 {
		top := &h[0]
		if err := emit(&top.e); err != nil {
			return err
		}
		e, ok, err := srcs[top.src].next()
		if err != nil {
			return err
		}
		if ok {
			top.e = e
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
	}
	return nil
}

type mergeItem struct {
	e   entry
	src int
}

type mergeHeap []mergeItem

func (h mergeHeap) Len() int { return len(h) }
func (h mergeHeap) Less(i, j int) bool {
	if c := bytes.Compare(h[i].e.id[:], h[j].e.id[:]); c != 0 {
		return c < 0
	}
	return h[i].src < h[j].src
}
func (h mergeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)   { *h = append(*h, x.(mergeItem)) }
func (h *mergeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
