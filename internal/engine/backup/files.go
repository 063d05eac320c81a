package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/cloudstic/cloudstic/internal/repo/chunker"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// fileWorker reads, chunks and hashes files; new chunks go to the blob
// workers. Small files are read whole into the worker's buffer (and their
// chunk copied); larger ones borrow one of the walker's few chunkers (2*Max
// bytes each; see walker.chunkers), whose chunks go to the blob workers
// without a copy.
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
			if err := fr.emit(small[:m], nil); err != nil {
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
// chunkers, lent back once no chunk of it is still being saved.
func (fr *fileReader) readChunked(f io.Reader) error {
	w := fr.w
	var ch *chunker.Chunker
	select {
	case ch = <-w.chunkers:
	case <-w.ctx.Done():
		return w.ctx.Err()
	}
	// Chunks are handed to blob workers without a copy, so the chunker's
	// buffer must not be refilled, reset or lent again while any of them
	// is being saved.
	var inflight sync.WaitGroup
	defer func() {
		inflight.Wait()
		w.chunkers <- ch
	}()
	if ch == nil {
		var err error
		if ch, err = chunker.New(f, w.gear, w.params); err != nil {
			return err
		}
	} else {
		ch.Reset(f)
	}
	for {
		// Checked for every chunk: a file of known chunks (a sparse file's
		// zeros) sends no job that would notice a cancellation.
		if w.ctx.Err() != nil {
			return context.Cause(w.ctx)
		}
		if ch.WillRefill() {
			inflight.Wait()
		}
		chunk, err := ch.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", fr.path, err)
		}
		if err := fr.emit(chunk, &inflight); err != nil {
			return err
		}
	}
}

// emit hashes a chunk and, if it is new, hands it to a blob worker. With
// inflight nil the chunk is copied (it is in the reused small-file buffer);
// otherwise it is handed over as it is and inflight counts it.
func (fr *fileReader) emit(chunk []byte, inflight *sync.WaitGroup) error {
	w := fr.w
	fr.read += int64(len(chunk))
	if w.opts.Progress != nil {
		w.opts.Progress.Bytes.Add(int64(len(chunk)))
	}
	bid := w.r.Key().ID(chunk)
	fr.node.Content = append(fr.node.Content, bid)
	if w.sink.Known(bid) {
		return nil
	}
	job := blobJob{id: bid, data: chunk, inflight: inflight}
	if inflight == nil {
		// At least 64 KiB, so that most small files fit any buffer.
		job.data = append(w.chunkBufs.Get(max(len(chunk), 64<<10)), chunk...)
	} else {
		inflight.Add(1)
	}
	select {
	case w.blobs <- job:
		return nil
	case <-w.ctx.Done():
		if inflight != nil {
			inflight.Done()
		}
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

// saveBlob saves one chunk and then gives its memory back (Save keeps no
// reference to it). Jobs drained after a failure are given back too: a
// file worker may be waiting for them.
func (w *walker) saveBlob(job blobJob) {
	if w.ctx.Err() == nil {
		if _, err := w.sink.Save(w.ctx, pack.DataBlob, job.id, job.data); err != nil {
			w.fail(fmt.Errorf("saving blob %s: %w", job.id.Short(), err))
		}
	}
	if job.inflight != nil {
		job.inflight.Done()
	} else {
		w.chunkBufs.Put(job.data)
	}
}
