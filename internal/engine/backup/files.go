package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/cloudstic/cloudstic/internal/repo/chunker"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// fileWorker reads and chunks files. Small files are read whole into the
// worker's buffer, hashed, and their chunk copied to the blob workers if it
// is new; larger ones borrow one of the walker's few chunkers (2*Max bytes
// each; see walker.chunkers), whose chunks go to the blob workers without a
// copy, to be hashed there (see readChunked).
func (w *walker) fileWorker() {
	defer w.filesWG.Done()
	small := make([]byte, w.params.Min)
	for job := range w.files {
		if w.ctx.Err() != nil {
			job.done <- w.ctx.Err()
			continue
		}
		if w.opts.Progress != nil {
			w.opts.Progress.CurrentFile.Store(job.path)
		}
		job.done <- w.readFile(job, small)
		if w.opts.Progress != nil {
			w.opts.Progress.Files.Add(1)
		}
	}
}

// readFile stores one file's content: it fills the node's Content with the
// IDs of its chunks, hands the new ones to the blob workers, and records
// the size actually read.
func (w *walker) readFile(job fileJob, small []byte) error {
	f, err := w.src.Open(w.ctx, job.path)
	if err != nil {
		return fmt.Errorf("%s: %w", job.path, err)
	}
	defer f.Close() //nolint:errcheck // read-only source file; reads report their own errors
	fr := &fileReader{w: w, path: job.path, node: job.node}
	fr.node.Content = nil
	if fr.node.Size < uint64(len(small)) {
		whole, err := fr.readSmall(f, small)
		if err != nil {
			return err
		}
		if whole {
			return w.finishFile(job.path, fr.node, fr.read)
		}
	}
	if err := fr.readChunked(f); err != nil {
		return err
	}
	return w.finishFile(job.path, fr.node, fr.read)
}

// fileReader is the state of reading one file: its node, whose Content
// grows by one ID per chunk, and the bytes read so far.
type fileReader struct {
	w    *walker
	path string
	node *tree.Node
	read int64
}

// readSmall reads a file expected to be smaller than the minimum chunk in
// one read into small, which it then is as one chunk. whole is false when
// the file grew past the minimum meanwhile: f is rewound, to be chunked.
func (fr *fileReader) readSmall(f io.ReadSeeker, small []byte) (whole bool, err error) {
	m, err := io.ReadFull(f, small)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("%s: %w", fr.path, err)
	}
	if m < len(small) {
		if m > 0 {
			if err := fr.emit(small[:m]); err != nil {
				return false, err
			}
		}
		return true, nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return false, fmt.Errorf("%s: %w", fr.path, err)
	}
	return false, nil
}

// readChunked cuts f into content-defined chunks with one of the walker's
// chunkers. The chunks go to the blob workers unhashed: they compute the
// ids (see idWindow), so that the hashing of one large file is spread over
// every core instead of holding up the one file worker that reads it.
//
// Chunks are handed over without a copy, so the chunker's buffer must not
// be moved (see WillRefill) while any chunk of it, of this file or of one
// before, is being saved: the chunker's inflight counts those. The chunker
// goes back to the pool as soon as f is read, and the next file is read
// after this one's bytes (chunker.Continue) while this one's last chunks
// are saved: mine counts those, for the ids.
func (fr *fileReader) readChunked(f io.Reader) error {
	w := fr.w
	var lc *lentChunker
	select {
	case lc = <-w.chunkers:
	case <-w.ctx.Done():
		return w.ctx.Err()
	}
	var mine sync.WaitGroup
	lent := true
	giveBack := func() {
		if lent {
			lent = false
			w.chunkers <- lc
		}
	}
	defer func() {
		giveBack()
		mine.Wait() // the blob workers write the ids into win
	}()
	if lc.ch == nil {
		var err error
		if lc.ch, err = chunker.New(f, w.gear, w.params); err != nil {
			return err
		}
	} else {
		lc.ch.Continue(f)
	}
	win := newIDWindow(w.params)
	for {
		// Checked for every chunk, so that a cancelled run stops reading
		// a large file at once.
		if w.ctx.Err() != nil {
			return context.Cause(w.ctx)
		}
		if lc.ch.WillRefill() {
			lc.inflight.Wait()
		}
		if lc.ch.WillRefill() || win.full() {
			if err := fr.collect(&mine, win); err != nil {
				return err
			}
		}
		chunk, err := lc.ch.Next()
		if errors.Is(err, io.EOF) {
			giveBack()
			return fr.collect(&mine, win)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", fr.path, err)
		}
		if err := fr.emitChunk(chunk, &lc.inflight, &mine, win.next()); err != nil {
			return err
		}
	}
}

// lentChunker is a chunker (nil until first used) that file workers take
// turns on, with the count of its chunks still being saved, of every file
// it cut.
type lentChunker struct {
	ch       *chunker.Chunker
	inflight sync.WaitGroup
}

// idWindow holds the ids of the chunks a file worker handed to the blob
// workers since it last collected them: each job carries a slot of ids,
// which its blob worker fills. The slots never move (the window is made
// with room for every chunk one chunker buffer can hold, and collected
// when full), and are read only once every job is done.
type idWindow struct{ ids []id.ID }

// newIDWindow returns a window with room for the chunks of one chunker
// buffer (2*Max bytes, every chunk but a stream's last at least Min).
func newIDWindow(p chunker.Params) *idWindow {
	return &idWindow{ids: make([]id.ID, 0, 2*p.Max/p.Min+1)}
}

func (iw *idWindow) full() bool { return len(iw.ids) == cap(iw.ids) }

// next returns the slot of the next chunk (the window must not be full).
func (iw *idWindow) next() *id.ID {
	iw.ids = iw.ids[:len(iw.ids)+1]
	iw.ids[len(iw.ids)-1] = id.ID{}
	return &iw.ids[len(iw.ids)-1]
}

// collect waits until the blob workers are done with every chunk handed
// over, then appends their ids to the node's content and empties win. A
// failed or cancelled run may have dropped jobs, leaving their slots
// unset: then it returns why the run ended.
func (fr *fileReader) collect(inflight *sync.WaitGroup, win *idWindow) error {
	inflight.Wait()
	if fr.w.ctx.Err() != nil {
		return context.Cause(fr.w.ctx)
	}
	fr.node.Content = append(fr.node.Content, win.ids...)
	win.ids = win.ids[:0]
	return nil
}

// count adds n bytes read to the file's and the progress's counts.
func (fr *fileReader) count(n int) {
	fr.read += int64(n)
	if fr.w.opts.Progress != nil {
		fr.w.opts.Progress.Bytes.Add(int64(n))
	}
}

// emit hashes a chunk of a small file, lying in the worker's reused
// buffer, and if it is new hands a copy of it to a blob worker.
func (fr *fileReader) emit(chunk []byte) error {
	w := fr.w
	fr.count(len(chunk))
	bid := w.r.Key().ID(chunk)
	fr.node.Content = append(fr.node.Content, bid)
	if w.sink.Known(bid) {
		return nil
	}
	// At least 64 KiB, so that most small files fit any buffer.
	job := blobJob{id: bid, data: append(w.chunkBufs.Get(max(len(chunk), 64<<10)), chunk...)}
	select {
	case w.blobs <- job:
		return nil
	case <-w.ctx.Done():
		return w.ctx.Err()
	}
}

// emitChunk hands a chunk lying in a chunker's buffer, as it is, to a blob
// worker, which writes its id to slot and saves it if it is new; inflight
// (the chunker's) and mine (the file's) count it until then.
func (fr *fileReader) emitChunk(chunk []byte, inflight, mine *sync.WaitGroup, slot *id.ID) error {
	w := fr.w
	fr.count(len(chunk))
	inflight.Add(1)
	mine.Add(1)
	select {
	case w.blobs <- blobJob{data: chunk, inflight: inflight, file: mine, slot: slot}:
		return nil
	case <-w.ctx.Done():
		inflight.Done()
		mine.Done()
		return w.ctx.Err()
	}
}

// finishFile records what was actually read: a file that changed size while
// we read it is stored as read, with a warning.
func (w *walker) finishFile(path string, n *tree.Node, read int64) error {
	w.n.bytesRead.Add(read)
	if exported(n) {
		n.Size = uint64(read) // known only now
		return nil
	}
	if uint64(read) != n.Size {
		if w.opts.Warnf != nil {
			w.opts.Warnf("%s changed size while being read (%d → %d bytes); stored what was read", path, n.Size, read)
		}
		n.Size = uint64(read)
	}
	return nil
}

func (w *walker) blobWorker() {
	defer w.blobsWG.Done()
	for job := range w.blobs {
		w.saveBlob(job)
	}
}

// saveBlob saves one chunk unless it is known, first computing its id
// when the job has a slot for it, and then gives its memory back (Save
// keeps no reference to it). Jobs drained after a failure are given back
// too: a file worker may be waiting for them.
func (w *walker) saveBlob(job blobJob) {
	if w.ctx.Err() == nil {
		if job.slot != nil {
			job.id = w.r.Key().ID(job.data)
			*job.slot = job.id
		}
		if _, err := w.sink.Save(w.ctx, pack.DataBlob, job.id, job.data); err != nil {
			w.fail(fmt.Errorf("saving blob %s: %w", job.id.Short(), err))
		}
	}
	if job.inflight != nil {
		job.file.Done() // after the slot's write: the file worker reads it then
		job.inflight.Done()
	} else {
		w.chunkBufs.Put(job.data)
	}
}
