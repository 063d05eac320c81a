package restore

import (
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cloudstic/cloudstic/internal/repo/id"
)

// A large file is restored by several workers at once, one segment of its
// content each, written with pwrite at the segment's offset: one worker
// alone would restore a big disk image or database dump on one core, and
// from S3 one ranged read at a time. The segments' offsets come from the
// plain lengths of the index (version 2 on); a file with a chunk of
// unknown plain length is restored by one worker, as before.
//
// segmentSize is the plain bytes of one segment, at least; a file of four
// segments or more is split.
const segmentSize = 16 << 20

// largeFile is a file being restored in segments. The worker that finishes
// its last segment completes it (name, metadata, count), or reports it
// damaged when any segment failed.
type largeFile struct {
	e    entry
	f    *os.File
	tmp  string
	left atomic.Int32 // segments not done yet

	mu      sync.Mutex
	err     error // the first segment's failure
	holes   bool  // a segment left a hole
	lengths [][]uint32
}

func (lf *largeFile) failed() bool {
	lf.mu.Lock()
	defer lf.mu.Unlock()
	return lf.err != nil
}

// segment is a run of a large file's chunks and the file offsets
// [start, end) their plain bytes fill.
type segment struct {
	file       *largeFile
	i          int
	start, end int64
	content    []id.ID
}

// segments splits a file's content into segments, or returns nil when the
// file is restored by one worker: too small, a single worker, or a chunk
// whose plain length the index does not know (or lengths that do not add
// up to the file's size, which the one-worker restore reports).
func (d *dirRestore) segments(e *entry) []segment {
	size := int64(segmentSize)
	if d.opts.segmentSize > 0 {
		size = d.opts.segmentSize
	}
	if e.node.Size < uint64(4*size) || d.opts.Workers < 2 {
		return nil
	}
	var segs []segment
	var off, start int64
	first := 0
	for i, blob := range e.node.Content {
		loc, ok := d.r.Index().Lookup(d.ctx, blob)
		if !ok || loc.Plain == 0 {
			return nil
		}
		off += int64(loc.Plain)
		if off-start >= size || i == len(e.node.Content)-1 {
			segs = append(segs, segment{i: len(segs), start: start, end: off, content: e.node.Content[first : i+1]})
			start, first = off, i+1
		}
	}
	if uint64(off) != e.node.Size {
		return nil
	}
	return segs
}

// sendLarge creates the pending file and queues its segments for the
// workers. Segments that cannot be queued (the restore was interrupted)
// count as failed, so that the file is still completed: closed, and its
// temporary name removed.
func (d *dirRestore) sendLarge(e entry, segs []segment) error {
	f, tmp, err := d.createPending(&e)
	if err != nil {
		d.damaged(e.rel, err)
		return nil
	}
	if err := (&contentWriter{f: f, sparse: !d.opts.NoSparse}).reserve(e.node.Size); err != nil {
		d.complete(e, f, tmp, err, 0, nil)
		return nil
	}
	lf := &largeFile{e: e, f: f, tmp: tmp, lengths: make([][]uint32, len(segs))}
	lf.left.Store(int32(len(segs)))
	for i := range segs {
		segs[i].file = lf
	}
	for i := range segs {
		select {
		case d.jobs <- job{segment: &segs[i]}:
		case <-d.ctx.Done():
			for j := i; j < len(segs); j++ {
				d.segmentDone(&segs[j], d.ctx.Err(), nil)
			}
			return d.ctx.Err()
		}
	}
	return nil
}

// segment writes one segment of a large file.
func (d *dirRestore) segment(s *segment, buf *writeBuffers) {
	cw := d.contentWriter(s.file.f, s.start, buf)
	var err error
	for content := s.content; len(content) > 0; {
		if s.file.failed() {
			break // the file is damaged already: the rest is wasted work
		}
		var n int
		if n, err = d.chunkRun(content, buf, cw); err != nil {
			break
		}
		content = content[n:]
	}
	if err == nil && cw.off != s.end {
		// A chunk's plain length differs from the index's: the next
		// segment's bytes may have been overwritten.
		err = fmt.Errorf("%w: segment at %d ends at %d, index says %d", errSize, s.start, cw.off, s.end)
	}
	d.segmentDone(s, err, cw)
}

// segmentDone records a segment's outcome (cw nil: never written) and
// completes the file after its last segment.
func (d *dirRestore) segmentDone(s *segment, err error, cw *contentWriter) {
	lf := s.file
	lf.mu.Lock()
	if err != nil && lf.err == nil {
		lf.err = err
	}
	if cw != nil {
		lf.holes = lf.holes || cw.holes
		lf.lengths[s.i] = cw.lengths
	}
	lf.mu.Unlock()
	if lf.left.Add(-1) > 0 {
		return
	}
	size := int64(lf.e.node.Size)
	werr := lf.err
	if werr == nil && lf.holes {
		werr = lf.f.Truncate(size) // the last blocks may be a hole
	}
	d.complete(lf.e, lf.f, lf.tmp, werr, size, slices.Concat(lf.lengths...))
}
