package restore

import (
	"errors"
	"fmt"
	"os"

	"github.com/cloudstic/cloudstic/internal/engine/fsmeta"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/index"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// file restores one file. Chunks stored one after the other in a pack (as
// a backup writes a file's chunks) are read with one ranged read per run
// of them, not one per chunk: fewer requests on S3, and on a local store
// one open and read instead of one per chunk.
func (d *dirRestore) file(e entry, buf *writeBuffers) {
	// chunkRun's errors never wrap errRetryAlone: the file is reported.
	_ = d.fileWith(e, buf, func(cw *contentWriter) error {
		for content := e.node.Content; len(content) > 0; {
			n, err := d.chunkRun(content, buf, cw)
			if err != nil {
				return err
			}
			content = content[n:]
		}
		return nil
	})
}

// chunkRun writes the chunks content starts with that lie back to back
// in one pack (at most d.span bytes of them: read whole, or streamed with
// d.stream), and returns how many. The run is written at the locations
// its lookups found: a second lookup could fail (an on-disk index whose
// rebuild was stopped) and give none.
func (d *dirRestore) chunkRun(content []id.ID, buf *writeBuffers, cw *contentWriter) (int, error) {
	first, ok := d.r.Index().Lookup(d.ctx, content[0])
	locs := []index.Location{first}
	end := uint64(first.Offset) + uint64(first.Length)
	for ok && len(locs) < len(content) {
		loc, found := d.r.Index().Lookup(d.ctx, content[len(locs)])
		next := uint64(loc.Offset) + uint64(loc.Length)
		if !found || loc.Pack != first.Pack || uint64(loc.Offset) != end || next-uint64(first.Offset) > d.span {
			break
		}
		locs, end = append(locs, loc), next
	}
	n := len(locs)
	if !ok {
		// Not in the index: LoadBlobWith says so.
		dec := d.decoders.get()
		defer d.decoders.put(dec)
		data, err := d.r.LoadBlobWith(d.ctx, dec, content[0])
		if err != nil {
			return 0, err
		}
		return 1, cw.write(data)
	}
	if d.stream {
		return n, d.streamRun(locs, content[:n], end, buf, cw)
	}
	data, err := d.readPack(first.Pack, uint64(first.Offset), end, buf.packBuffer())
	if err != nil {
		return 0, fmt.Errorf("chunks %s... in pack %s: %w", content[0].Short(), first.Pack.Short(), err)
	}
	for i, blob := range content[:n] {
		off := uint64(locs[i].Offset) - uint64(first.Offset)
		if err := d.decodeWrite(data[off:off+uint64(locs[i].Length)], blob, cw); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// decodeWrite decodes one chunk in place in the range read and writes its
// plaintext with cw, holding a decoder of the pool in between.
func (d *dirRestore) decodeWrite(sealed []byte, blob id.ID, cw *contentWriter) error {
	dec := d.decoders.get()
	defer d.decoders.put(dec)
	plain, err := dec.DecodeInPlace(sealed, blob)
	if err != nil {
		return err
	}
	return cw.write(plain)
}

// readPack reads bytes [start, end) of pack into *buf (kept for the next
// read) and returns them.
func (d *dirRestore) readPack(p id.ID, start, end uint64, buf *[]byte) ([]byte, error) {
	data, err := d.r.ReadPackRange(d.ctx, p, int64(start), int64(end-start), *buf)
	if err != nil {
		return nil, err
	}
	*buf = data[:0]
	return data, nil
}

// restoreBatch restores files whose chunks lie in one range of one pack
// with a single read. Any file whose chunks cannot be read or verified from
// that range is restored on its own afterwards (which reports it if it is
// damaged), when the worker's buffer no longer holds the range.
func (d *dirRestore) restoreBatch(b *batch, buf *writeBuffers) {
	if d.stream {
		d.streamBatch(b, buf)
		return
	}
	data, err := d.readPack(b.pack, b.start, b.end, buf.packBuffer())
	if err != nil {
		for _, e := range b.files {
			d.file(e, buf)
		}
		return
	}
	var alone []entry
	// Chunks are decrypted in place: a second use of a location (a
	// second file of the same content, or a chunk a file repeats) reads
	// its own copy.
	decoded := make(map[uint32]struct{}, len(b.files))
	for i, e := range b.files {
		if !claim(decoded, b.locs[i]) || !d.batchFile(b, i, data, buf) {
			alone = append(alone, e)
		}
	}
	for _, e := range alone {
		d.file(e, buf)
	}
}

// batchFile restores file i of batch b from data, the batch's range, and
// says whether it did: false when one of its chunks did not verify, for
// the caller to restore it on its own.
func (d *dirRestore) batchFile(b *batch, i int, data []byte, buf *writeBuffers) bool {
	e, locs := b.files[i], b.locs[i]
	sealed := func(j int) []byte {
		off := uint64(locs[j].Offset) - b.start
		return data[off : off+uint64(locs[j].Length)]
	}
	if len(locs) == 1 {
		// Decoded before the file is created: a damaged blob costs no
		// file. The decoder holds the plaintext until it is written.
		dec := d.decoders.get()
		defer d.decoders.put(dec)
		plain, err := dec.DecodeInPlace(sealed(0), e.node.Content[0])
		if err != nil {
			return false
		}
		_ = d.fileWith(e, buf, func(cw *contentWriter) error { return cw.write(plain) }) // never errRetryAlone
		return true
	}
	werr := d.fileWith(e, buf, func(cw *contentWriter) error {
		for j := range locs {
			dec := d.decoders.get()
			plain, err := dec.DecodeInPlace(sealed(j), e.node.Content[j])
			if err != nil {
				d.decoders.put(dec)
				return fmt.Errorf("%w: %w", errRetryAlone, err)
			}
			err = cw.write(plain)
			d.decoders.put(dec)
			if err != nil {
				return err
			}
		}
		return nil
	})
	return !errors.Is(werr, errRetryAlone)
}

// errRetryAlone means a chunk of a batch did not verify: the file is
// dropped unnamed and restored on its own, which reports it if it is
// damaged.
var errRetryAlone = errors.New("chunk of a batch unreadable, file restored on its own")

// claim marks the locations of a file's chunks as decoded, unless one of
// them already is (or the file repeats one): then it returns false and
// marks nothing.
func claim(decoded map[uint32]struct{}, locs []index.Location) bool {
	for i, loc := range locs {
		if _, dup := decoded[loc.Offset]; dup {
			return false
		}
		for _, prev := range locs[:i] {
			if prev.Offset == loc.Offset {
				return false
			}
		}
	}
	for _, loc := range locs {
		decoded[loc.Offset] = struct{}{}
	}
	return true
}

// fileWith writes one file where no name shows it (an unnamed file, or a
// temporary name), fills it with content, gives it its metadata and only
// then its name: an interrupted or failed restore never leaves a partly
// written file under a snapshot's name, nor replaces a good one with it.
//
// It returns the error of content when that wraps errRetryAlone: the file
// was then dropped without a report, for the caller to restore otherwise.
func (d *dirRestore) fileWith(e entry, buf *writeBuffers, content func(*contentWriter) error) error {
	pf := d.startFile(e, buf)
	if pf == nil {
		return nil
	}
	if pf.err == nil {
		pf.err = content(pf.cw)
	}
	if errors.Is(pf.err, errRetryAlone) {
		d.drop(pf.f, pf.tmp)
		return pf.err
	}
	d.endFile(pf)
	return nil
}

// pendingFile is a file being written where no name shows it (fileWith).
type pendingFile struct {
	e   entry
	f   *os.File
	tmp string // its temporary name; "" when unnamed
	cw  *contentWriter
	err error // the first error writing it

	// With placed: the file offset of each chunk (nil: written in
	// order), the chunks not written yet, and each one's length for
	// Verify.
	at      []int64
	left    int
	lengths []uint32
}

// startFile creates e's pending file, with its size reserved, or reports
// e damaged and returns nil.
func (d *dirRestore) startFile(e entry, buf *writeBuffers) *pendingFile {
	f, tmp, err := d.createPending(&e)
	if err != nil {
		d.damaged(e.rel, err)
		return nil
	}
	pf := &pendingFile{e: e, f: f, tmp: tmp, cw: d.contentWriter(f, 0, buf)}
	pf.err = pf.cw.reserve(e.node.Size)
	return pf
}

// placed prepares pf for writeChunk: its chunks' file offsets (nil: they
// come in order) and their number.
func (pf *pendingFile) placed(at []int64, chunks int) {
	pf.at, pf.left = at, chunks
	if at != nil && pf.cw.keepLengths {
		pf.lengths = make([]uint32, chunks)
		pf.cw.keepLengths = false // kept in the file's order here
	}
}

// writeChunk writes chunk j's plaintext, unless writing pf failed already:
// at its offset when the chunks come out of order, where a plaintext of
// another length than the index's (plain) would overwrite the next chunk.
func (pf *pendingFile) writeChunk(j int, plain []byte, want uint32) {
	pf.left--
	if pf.err != nil {
		return
	}
	if pf.at == nil {
		pf.err = pf.cw.write(plain)
		return
	}
	if uint32(len(plain)) != want { //nolint:gosec // a chunk's length is below 4 GiB
		pf.err = fmt.Errorf("%w: chunk %d is %d bytes, the index says %d", errSize, j, len(plain), want)
		return
	}
	if pf.lengths != nil {
		pf.lengths[j] = want
	}
	pf.cw.off = pf.at[j]
	pf.err = pf.cw.write(plain)
}

// endFile completes pf after its content: metadata and name, or its
// removal and a report when writing it failed.
func (d *dirRestore) endFile(pf *pendingFile) {
	if pf.at != nil {
		// Every chunk was written at its place, with the index's length,
		// and these add up to the size (chunkOffsets).
		pf.cw.off = int64(pf.e.node.Size) //nolint:gosec // the size of a file
		if pf.lengths != nil {
			pf.cw.lengths = pf.lengths
		}
	}
	if pf.err == nil {
		pf.err = pf.cw.finish(pf.e.node.Size)
	}
	d.complete(pf.e, pf.f, pf.tmp, pf.err, pf.cw.off, pf.cw.lengths)
}

// drop closes and removes a pending file that will not be named. An
// unnamed one goes with its descriptor.
func (d *dirRestore) drop(f *os.File, tmp string) {
	_ = f.Close() // nothing of it is kept
	if tmp != "" {
		if err := d.w.Remove(tmp); err != nil {
			d.opts.Warnf("%s: %v", tmp, err)
		}
	}
}

// contentWriter returns a writer of a pending file's content from offset
// off on.
func (d *dirRestore) contentWriter(f *os.File, off int64, buf *writeBuffers) *contentWriter {
	return &contentWriter{f: f, off: off, sparse: !d.opts.NoSparse, zeros: buf.zeros, progress: d.opts.Progress,
		keepLengths: d.opts.Verify}
}

// complete ends a pending file whose content was written (werr nil: all
// of its size bytes, chunks of lengths) or failed: metadata, name and
// count, or its removal and a report.
func (d *dirRestore) complete(e entry, f *os.File, tmp string, werr error, size int64, lengths []uint32) {
	if werr == nil {
		// Metadata through the open descriptor, after the last write:
		// cheaper than resolving the path again, and mtime stays put.
		if err := d.w.ApplyMetaFile(f, e.rel, &e.node); err != nil {
			d.opts.Warnf("%s: %v", e.rel, err)
		}
	}
	if werr == nil && tmp == "" {
		werr = d.w.LinkUnnamed(f, e.rel)
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil && tmp != "" {
		werr = d.w.Rename(tmp, e.rel, !e.replace)
	}
	if werr == nil {
		// Last: an immutable file could not have been renamed.
		if err := d.w.ApplyFlags(e.rel, &e.node); err != nil {
			d.opts.Warnf("%s: %v", e.rel, err)
		}
	}
	if werr != nil {
		if tmp != "" {
			if rerr := d.w.Remove(tmp); rerr != nil {
				werr = errors.Join(werr, rerr)
			}
		}
		if errors.Is(werr, fsmeta.ErrExists) {
			d.skip(e.rel, "appeared during the restore, not overwritten")
		} else {
			d.damaged(e.rel, werr)
		}
		return
	}
	d.mu.Lock()
	d.res.Files++
	d.res.Bytes += size
	if d.opts.Verify {
		d.written = append(d.written, writtenFile{rel: e.rel, node: &e.node, lengths: lengths})
	}
	d.mu.Unlock()
	if p := d.opts.Progress; p != nil {
		p.Files.Add(1)
	}
}

// createPending opens the file e's content is written to: an unnamed file
// (O_TMPFILE: one directory update when it is linked, and nothing left
// behind even by kill -9) when nothing is to be replaced and the file
// system has them, else a file with a temporary name (returned), renamed
// over the old one at the end.
func (d *dirRestore) createPending(e *entry) (f *os.File, tmp string, err error) {
	if !e.replace && !d.noUnnamed.Load() {
		f, err := d.w.CreateUnnamed(e.rel)
		if !errors.Is(err, fsmeta.ErrNoUnnamed) {
			return f, "", err
		}
		d.noUnnamed.Store(true)
	}
	tmp = tempName(e.rel)
	f, err = d.w.CreateFile(tmp, &e.node)
	return f, tmp, err
}

// writtenFile is a file to read back for Verify, with its chunk lengths.
type writtenFile struct {
	rel     string
	node    *tree.Node
	lengths []uint32
}

// errSize means a file's chunks do not add up to the size its node states.
var errSize = errors.New("content size differs from the snapshot's")

// checkSize is the final check of a written file's length.
func checkSize(written int64, n uint64) error {
	if uint64(written) != n {
		return fmt.Errorf("%w: %d bytes, snapshot says %d", errSize, written, n)
	}
	return nil
}
