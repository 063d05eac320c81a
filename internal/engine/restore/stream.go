package restore

import (
	"cmp"
	"fmt"
	"io"
	"slices"

	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/index"
)

// From a store across a network a restore streams its reads of packs
// (restoreShape): a run of a file's chunks, or a batch's range, is one
// request however long, and its chunks are decoded and written one at a
// time as they arrive, in the worker's buffer. A worker thus needs memory
// for a chunk, not for the range, and one request a pack (as restic makes)
// replaces one a buffer's worth, each a round trip.

// maxOpenFiles bounds the files a streamed batch writes at once: a file
// is open from its first chunk in the pack to its last, and the backup's
// concurrent blob workers interleave the chunks of files.
const maxOpenFiles = 32

// streamRun writes run, chunks lying back to back in one pack at locs
// (locs[i] is run[i]'s) up to end, from one stream of them.
func (d *dirRestore) streamRun(locs []index.Location, run []id.ID, end uint64, buf *writeBuffers, cw *contentWriter) error {
	first := locs[0]
	readErr := func(err error) error {
		return fmt.Errorf("chunks %s... in pack %s: %w", run[0].Short(), first.Pack.Short(), err)
	}
	rc, err := d.r.OpenPackRange(d.ctx, first.Pack, int64(first.Offset), int64(end-uint64(first.Offset)))
	if err != nil {
		return readErr(err)
	}
	// Closing a stream read to its end, or abandoned after an error that
	// is returned, has nothing more to report.
	defer rc.Close() //nolint:errcheck // see above
	for i, blob := range run {
		sealed, err := readChunk(rc, locs[i], buf)
		if err != nil {
			return readErr(err)
		}
		if err := d.decodeWrite(sealed, blob, cw); err != nil {
			return err
		}
	}
	return nil
}

// readChunk reads the next loc.Length bytes of a stream into the worker's
// buffer (or, for a chunk larger than it, a buffer of its own).
func readChunk(r io.Reader, loc index.Location, buf *writeBuffers) ([]byte, error) {
	span := buf.packBuffer()
	sealed := *span
	if cap(sealed) < int(loc.Length) {
		sealed = make([]byte, loc.Length)
	}
	sealed = sealed[:loc.Length]
	if _, err := io.ReadFull(r, sealed); err != nil {
		return nil, err
	}
	if cap(sealed) <= cap(*span) {
		*span = sealed[:0]
	}
	return sealed, nil
}

// streamFile restores a file alone whose chunks lie in one pack within
// streamSpan as a batch of its own, streamed: one request, whatever the
// order of its chunks in the pack; any other as file does (which is also
// how streamBatch restores the files it could not).
func (d *dirRestore) streamFile(e entry, buf *writeBuffers) {
	p, ok := locateIn(d.ctx, d.r, e, d.span)
	if !ok {
		d.file(e, buf)
		return
	}
	d.streamBatch(&batch{pack: p.locs[0].Pack, start: p.start, end: p.end,
		files: []entry{e}, locs: [][]index.Location{p.locs}}, buf)
}

// piece is one chunk of a streamed batch: chunk j of file i, at loc.
type piece struct {
	loc  index.Location
	i, j int
}

// streamPlan is how a batch is streamed: its chunks in the pack's order,
// the files to restore on their own instead, and for each file whose
// chunks the pack holds out of the file's order the file offset of each
// chunk (nil for a file in order, written as its chunks come).
type streamPlan struct {
	pieces []piece
	alone  []int
	at     [][]int64
}

// planStream plans the stream of batch b. A backup's concurrent blob
// workers pack the chunks of a file in the order they finish, so a file's
// chunks may lie out of its order: each is then written at its offset,
// known from the plain lengths of the index (version 2 on). On their own
// go the files that share a location with an earlier file (a chunk is
// decrypted in place, so each is used once), those out of order whose
// offsets the index cannot give, and those that would keep more than
// maxOpenFiles files open.
func planStream(b *batch) streamPlan {
	plan := streamPlan{at: make([][]int64, len(b.files))}
	decoded := make(map[uint32]struct{}, len(b.files))
	var lasts []uint32 // the last chunk offsets of the files open where the file planned starts
	for i, locs := range b.locs {
		first, last := locs[0].Offset, locs[0].Offset
		for _, loc := range locs {
			first, last = min(first, loc.Offset), max(last, loc.Offset)
		}
		lasts = slices.DeleteFunc(lasts, func(l uint32) bool { return l < first })
		at, ok := chunkOffsets(b.files[i], locs)
		if !ok || len(lasts) >= maxOpenFiles || !claim(decoded, locs) {
			plan.alone = append(plan.alone, i)
			continue
		}
		plan.at[i] = at
		lasts = append(lasts, last)
		for j, loc := range locs {
			plan.pieces = append(plan.pieces, piece{loc: loc, i: i, j: j})
		}
	}
	slices.SortFunc(plan.pieces, func(x, y piece) int { return cmp.Compare(x.loc.Offset, y.loc.Offset) })
	return plan
}

// chunkOffsets returns nil and true for a file whose chunks lie in the
// pack in its order, the file offset of each chunk for one out of order,
// or false when the index does not know their plain lengths or these do
// not add up to the file's size.
func chunkOffsets(e entry, locs []index.Location) ([]int64, bool) {
	inOrder := true
	for k := 1; k < len(locs); k++ {
		inOrder = inOrder && locs[k].Offset > locs[k-1].Offset
	}
	if inOrder {
		return nil, true
	}
	at := make([]int64, len(locs))
	var off uint64
	for j, loc := range locs {
		if loc.Plain == 0 {
			return nil, false
		}
		at[j] = int64(off) //nolint:gosec // a sum of uint32 lengths
		off += uint64(loc.Plain)
	}
	return at, off == e.node.Size
}

// fileState is where a file of a streamed batch stands.
type fileState int8

const (
	notStarted fileState = iota
	writing              // created, some chunks written
	finished             // completed, or reported damaged
	retrying             // dropped, to restore on its own
)

// streamBatch restores batch b from one stream of its range. Each file is
// created at its first chunk and completed at its last; a file one of
// whose chunks does not verify is dropped, unnamed, and restored on its
// own afterwards (which reports it if it is damaged), as is every file
// the stream did not deliver whole.
func (d *dirRestore) streamBatch(b *batch, buf *writeBuffers) {
	plan := planStream(b)
	state := make([]fileState, len(b.files))
	for _, i := range plan.alone {
		state[i] = retrying
	}
	open := make(map[int]*pendingFile)
	if err := d.streamPieces(b, plan, buf, state, open); err != nil {
		// The stream broke off: what it did not deliver is read again,
		// file by file.
		for i, pf := range open {
			d.drop(pf.f, pf.tmp)
			state[i] = retrying
		}
		for i, st := range state {
			if st == notStarted {
				state[i] = retrying
			}
		}
	}
	for i, st := range state {
		if st == retrying {
			d.file(b.files[i], buf)
		}
	}
}

// streamPieces streams the part of b's pack that pieces lie in and
// writes each piece as it arrives, skipping the bytes between them and
// those of files dropped on the way. The error is the stream's.
func (d *dirRestore) streamPieces(b *batch, plan streamPlan, buf *writeBuffers, state []fileState, open map[int]*pendingFile) error {
	pieces := plan.pieces
	if len(pieces) == 0 {
		return nil
	}
	start, end := uint64(pieces[0].loc.Offset), uint64(0)
	for _, p := range pieces {
		end = max(end, uint64(p.loc.Offset)+uint64(p.loc.Length))
	}
	rc, err := d.r.OpenPackRange(d.ctx, b.pack, int64(start), int64(end-start))
	if err != nil {
		return err
	}
	// Closing a stream read to its end, or abandoned after an error that
	// is returned, has nothing more to report.
	defer rc.Close() //nolint:errcheck // see above
	pos := start
	for _, p := range pieces {
		if state[p.i] != notStarted && state[p.i] != writing {
			continue // dropped, or reported: its bytes are skipped
		}
		if gap := int64(uint64(p.loc.Offset) - pos); gap > 0 {
			if _, err := io.CopyN(io.Discard, rc, gap); err != nil {
				return err
			}
		}
		sealed, err := readChunk(rc, p.loc, buf)
		if err != nil {
			return err
		}
		pos = uint64(p.loc.Offset) + uint64(p.loc.Length)
		d.streamPiece(b, p, plan.at[p.i], sealed, buf, state, open)
	}
	return nil
}

// streamPiece decodes one chunk of a streamed batch and writes it to its
// file (at at[p.j] when at is set): the file is created at its first
// chunk to arrive, completed at its last, dropped (to restore on its own)
// when a chunk does not verify.
func (d *dirRestore) streamPiece(b *batch, p piece, at []int64, sealed []byte, buf *writeBuffers, state []fileState, open map[int]*pendingFile) {
	e := b.files[p.i]
	dec := d.decoders.get()
	defer d.decoders.put(dec)
	plain, err := dec.DecodeInPlace(sealed, e.node.Content[p.j])
	if err != nil {
		if pf := open[p.i]; pf != nil {
			d.drop(pf.f, pf.tmp)
			delete(open, p.i)
		}
		state[p.i] = retrying
		return
	}
	pf := open[p.i]
	if pf == nil {
		// Created once a chunk verified: a damaged blob costs no file.
		if pf = d.startFile(e, buf); pf == nil {
			state[p.i] = finished // reported
			return
		}
		pf.placed(at, len(b.locs[p.i]))
		open[p.i], state[p.i] = pf, writing
	}
	pf.writeChunk(p.j, plain, p.loc.Plain)
	if pf.left == 0 {
		d.endFile(pf)
		delete(open, p.i)
		state[p.i] = finished
	}
}
