package backup

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/cloudstic/cloudstic/internal/repo/chunker"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// fileWorker reads, chunks and hashes files; new chunks go to the blob
// workers. Small files are read whole into the worker's buffer; larger
// ones borrow one of the walker's chunkers (2*Max bytes each, so there are
// only as many as blob workers, not as file workers: the heap profile of a
// 1 GB backup showed one 16 MiB chunker per file worker).
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

func (w *walker) readFile(job fileJob, small []byte) error {
	f, err := os.Open(job.path)
	if err != nil {
		return fmt.Errorf("%s: %w", job.path, err)
	}
	defer f.Close()
	n := job.node
	n.Content = nil
	var read int64
	emit := func(chunk []byte) error {
		read += int64(len(chunk))
		if w.opts.Progress != nil {
			w.opts.Progress.Bytes.Add(int64(len(chunk)))
		}
		bid := w.r.Key().ID(chunk)
		n.Content = append(n.Content, bid)
		if w.sink.Known(bid) {
			return nil
		}
		// The chunk aliases a reused buffer; the blob worker needs its own
		// copy (from a pool: the blob worker returns it after saving).
		var buf []byte
		if p, ok := w.chunkBufs.Get().(*[]byte); ok {
			buf = (*p)[:0]
		}
		job := blobJob{id: bid, data: append(buf, chunk...)}
		select {
		case w.blobs <- job:
			return nil
		case <-w.ctx.Done():
			return w.ctx.Err()
		}
	}
	if n.Size < uint64(len(small)) {
		// One read: a file smaller than the minimum chunk is one chunk.
		m, err := io.ReadFull(f, small)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
			return fmt.Errorf("%s: %w", job.path, err)
		}
		if m < len(small) {
			if m > 0 {
				if err := emit(small[:m]); err != nil {
					return err
				}
			}
			return w.finishFile(job.path, n, read)
		}
		// It grew past the minimum while we looked: chunk it properly.
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("%s: %w", job.path, err)
		}
	}
	var ch *chunker.Chunker
	select {
	case ch = <-w.chunkers:
	case <-w.ctx.Done():
		return w.ctx.Err()
	}
	defer func() { w.chunkers <- ch }()
	if ch == nil {
		if ch, err = chunker.New(f, w.gear, w.params); err != nil {
			return err
		}
	} else {
		ch.Reset(f)
	}
	for {
		chunk, err := ch.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", job.path, err)
		}
		if err := emit(chunk); err != nil {
			return err
		}
	}
	return w.finishFile(job.path, n, read)
}

// finishFile records what was actually read: a file that changed size while
// we read it is stored as read, with a warning.
func (w *walker) finishFile(path string, n *tree.Node, read int64) error {
	w.n.bytesRead.Add(read)
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
		if w.ctx.Err() != nil {
			continue // drain
		}
		if _, err := w.sink.Save(w.ctx, pack.DataBlob, job.id, job.data); err != nil {
			w.fail(fmt.Errorf("saving blob %s: %w", job.id.Short(), err))
		}
		w.chunkBufs.Put(&job.data) // Save keeps no reference to it
	}
}
