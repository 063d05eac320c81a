package restore

import (
	"fmt"
	"io"
	"sync"
)

// verify reads every file the restore wrote back from disk and checks each
// chunk against the content hash the snapshot gives it, with opts.Workers
// readers. Files that differ are reported one line each and listed in
// Result.VerifyFailed; only cancellation is an error.
func (d *dirRestore) verify() error {
	if d.opts.beforeVerify != nil {
		d.opts.beforeVerify()
	}
	jobs := make(chan *writtenFile)
	var wg sync.WaitGroup
	for range d.opts.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for wf := range jobs {
				err := d.verifyFile(wf, &buf)
				if d.ctx.Err() != nil {
					continue // interrupted: not a mismatch
				}
				d.count(func(r *Result) {
					r.Verified++
					if err != nil {
						r.VerifyFailed = append(r.VerifyFailed, wf.rel)
					}
				})
				if err != nil {
					d.opts.Warnf("%s: verify failed: %v", wf.rel, err)
				}
			}
		}()
	}
	defer wg.Wait()
	defer close(jobs)
	for i := range d.written {
		select {
		case jobs <- &d.written[i]:
		case <-d.ctx.Done():
			return d.ctx.Err()
		}
	}
	return nil
}

// verifyFile reads one written file and compares it with its node.
func (d *dirRestore) verifyFile(wf *writtenFile, buf *[]byte) error {
	f, err := d.w.OpenRead(wf.rel)
	if err != nil {
		return err
	}
	defer f.Close() //nolint:errcheck // opened for reading only
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("no longer a regular file (%s)", fi.Mode().Type())
	}
	if uint64(fi.Size()) != wf.node.Size {
		return fmt.Errorf("%d bytes on disk, snapshot says %d", fi.Size(), wf.node.Size)
	}
	key := d.r.Codec().Key()
	var off int64
	for i, n := range wf.lengths {
		if cap(*buf) < int(n) {
			*buf = make([]byte, n)
		}
		b := (*buf)[:n]
		if _, err := io.ReadFull(f, b); err != nil {
			return fmt.Errorf("read at %d: %w", off, err)
		}
		if got := key.ID(b); got != wf.node.Content[i] {
			return fmt.Errorf("bytes %d-%d differ from the snapshot's chunk %s", off, off+int64(n), wf.node.Content[i].Short())
		}
		off += int64(n)
	}
	return nil
}
