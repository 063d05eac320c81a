package restore

import (
	"bytes"
	"os"
)

// holeBlock is the granularity of holes: a block of the file (at a
// multiple of it) holding only zeros is not written when sparse. 4 KiB is
// the block size of ext4, xfs and btrfs; a larger file-system block is
// still only allocated when some part of it is written.
const holeBlock = 4096

// preallocateMin is the size from which a file restored without holes
// gets its blocks reserved up front (fallocate): one extent instead of
// many, at the cost of one system call, not worth it for small files.
const preallocateMin = 1 << 20

// contentWriter writes a file's content at increasing offsets with pwrite,
// one call per run of data (one per chunk unless it holds zero blocks).
// When sparse, blocks of zeros are skipped, leaving holes, and finish sets
// the file's length.
type contentWriter struct {
	f           *os.File
	off         int64
	sparse      bool
	holes       bool   // a block was skipped
	zeros       []byte // holeBlock zeros
	progress    *Progress
	keepLengths bool
	lengths     []uint32 // each chunk's length, for Verify
}

// reserve allocates the blocks of a file restored without holes. A file
// system that cannot is no error: the writes allocate them.
func (w *contentWriter) reserve(size uint64) error {
	if w.sparse || size < preallocateMin {
		return nil
	}
	return preallocate(w.f, int64(size)) //nolint:gosec // a file size from the snapshot, checked by the writes
}

// write appends one chunk.
func (w *contentWriter) write(data []byte) error {
	if w.keepLengths {
		w.lengths = append(w.lengths, uint32(len(data)))
	}
	if w.progress != nil {
		w.progress.Bytes.Add(int64(len(data)))
	}
	if !w.sparse {
		n, err := w.f.WriteAt(data, w.off)
		w.off += int64(n)
		return err
	}
	for len(data) > 0 {
		if n := w.zeroRun(data); n > 0 {
			w.off += int64(n)
			data = data[n:]
			w.holes = true
			continue
		}
		n := w.dataRun(data)
		m, err := w.f.WriteAt(data[:n], w.off)
		w.off += int64(m)
		if err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}

// block is the length of the block of data starting at the file offset
// w.off+i, cut at the next multiple of holeBlock.
func (w *contentWriter) block(data []byte, i int) int {
	n := holeBlock - int((w.off+int64(i))%holeBlock)
	return min(n, len(data)-i)
}

// zeroRun is the length of the zero blocks data starts with.
func (w *contentWriter) zeroRun(data []byte) int {
	i := 0
	for i < len(data) {
		n := w.block(data, i)
		if !bytes.Equal(data[i:i+n], w.zeros[:n]) {
			break
		}
		i += n
	}
	return i
}

// dataRun is the length of the blocks data starts with up to the next zero
// block; the first block is known not to be zero.
func (w *contentWriter) dataRun(data []byte) int {
	i := w.block(data, 0)
	for i < len(data) {
		n := w.block(data, i)
		if bytes.Equal(data[i:i+n], w.zeros[:n]) {
			break
		}
		i += n
	}
	return i
}

// finish checks the length written against the node's and, when blocks
// were skipped (the last ones perhaps), sets the file's length.
func (w *contentWriter) finish(size uint64) error {
	if err := checkSize(w.off, size); err != nil {
		return err
	}
	if w.holes {
		return w.f.Truncate(w.off)
	}
	return nil
}
