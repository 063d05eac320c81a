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
// workers. Each worker owns its chunker (allocated on the first file that
// needs one: small files are read whole).
func (w *walker) fileWorker() {
	defer w.filesWG.Done()
	var ch *chunker.Chunker
	small := make([]byte, w.params.Min)
	for job := range w.files {
		if w.ctx.Err() != nil {
			job.done <- w.ctx.Err()
			continue
		}
		if w.opts.Progress != nil {
			w.opts.Progress.CurrentFile.Store(job.path)
		}
		var err error
		ch, err = w.readFile(job, ch, small)
		job.done <- err
		if w.opts.Progress != nil {
			w.opts.Progress.Files.Add(1)
		}
	}
}

func (w *walker) readFile(job fileJob, ch *chunker.Chunker, small []byte) (*chunker.Chunker, error) {
	f, err := os.Open(job.path)
	if err != nil {
		return ch, fmt.Errorf("%s: %w", job.path, err)
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
		// The chunk aliases a reused buffer; the blob worker needs its own copy.
		job := blobJob{id: bid, data: append([]byte(nil), chunk...)}
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
			return ch, fmt.Errorf("%s: %w", job.path, err)
		}
		if m == len(small) {
			// It grew past the minimum while we looked: chunk it properly.
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return ch, fmt.Errorf("%s: %w", job.path, err)
			}
		} else {
			if m > 0 {
				if err := emit(small[:m]); err != nil {
					return ch, err
				}
			}
			return ch, w.finishFile(job.path, n, read)
		}
	}
	if ch == nil {
		if ch, err = chunker.New(f, w.gear, w.params); err != nil {
			return nil, err
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
			return ch, fmt.Errorf("%s: %w", job.path, err)
		}
		if err := emit(chunk); err != nil {
			return ch, err
		}
	}
	return ch, w.finishFile(job.path, n, read)
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
	}
}
