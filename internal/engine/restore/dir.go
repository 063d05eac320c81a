package restore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"

	"github.com/cloudstic/cloudstic/internal/engine/fsmeta"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// dirRestore is the state of one directory-mode restore.
type dirRestore struct {
	ctx  context.Context
	r    *repo.Repository
	opts Options
	w    *fsmeta.Writer
	root *os.Root // for removing damaged files

	// Walk state, used by the walking goroutine only.
	jobs    chan job
	batches *batcher
	dirs    []entry // directories, parents first
	later   []entry // second and later names of hard-link groups

	mu    sync.Mutex
	res   Result
	links map[hardlinkKey]string
}

func restoreDir(ctx context.Context, r *repo.Repository, start entry, prefix string, opts Options) (*Result, error) {
	d := &dirRestore{ctx: ctx, r: r, opts: opts, links: map[hardlinkKey]string{}}
	if opts.DryRun {
		return d.dryRun(start)
	}
	_, statErr := os.Lstat(opts.Output)
	createdOutput := errors.Is(statErr, fs.ErrNotExist)
	closeOutput, err := d.openOutput(prefix)
	if err != nil {
		return nil, err
	}
	defer closeOutput()

	d.jobs = make(chan job, opts.Workers)
	d.batches = &batcher{r: r}
	var wg sync.WaitGroup
	for i := 0; i < opts.Workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range d.jobs {
				if j.batch != nil {
					d.restoreBatch(j.batch)
				} else {
					d.file(j.file)
				}
			}
		}()
	}
	walkErr := walk(ctx, r, start, d.visit, d.damaged)
	// The last batch goes out even after a walk error (an unreadable
	// directory is skipped, not fatal): only cancellation drops it.
	if err := d.send(d.batches.flush()); walkErr == nil {
		walkErr = err
	}
	close(d.jobs)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return &d.res, err
	}
	d.finish()
	if createdOutput && start.rel == "." && opts.RootMeta != nil {
		if err := d.w.ApplyRootMeta(opts.RootMeta); err != nil {
			opts.Warnf("%v", err)
		}
	}
	// A failed walk is reported as itself: joining ErrDamaged onto it would
	// let a caller mistake a hard failure for a partial restore.
	if walkErr == nil && len(d.res.Damaged) > 0 {
		walkErr = fmt.Errorf("%w: %d damaged", ErrDamaged, len(d.res.Damaged))
	}
	return &d.res, walkErr
}

// openOutput opens the output directory for writing and, for -path, creates
// the selected entry's parent directories (their metadata is not
// restored): -path keeps the entry's place in the tree.
func (d *dirRestore) openOutput(prefix string) (func(), error) {
	wopts := fsmeta.DefaultWriterOptions()
	wopts.Logf = d.opts.Warnf
	w, err := fsmeta.NewWriter(d.opts.Output, wopts)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(d.opts.Output)
	if err != nil {
		w.Close() //nolint:errcheck // already failing
		return nil, err
	}
	d.w, d.root = w, root
	closeAll := func() {
		// Directory handles: nothing was written through them.
		w.Close()    //nolint:errcheck // see above
		root.Close() //nolint:errcheck // see above
	}
	if prefix != "" {
		parts := strings.Split(prefix, "/")
		for i := range parts {
			if err := w.Mkdir(strings.Join(parts[:i+1], "/"), nil); err != nil {
				closeAll()
				return nil, err
			}
		}
	}
	return closeAll, nil
}

// send queues jobs for the workers.
func (d *dirRestore) send(js []job) error {
	for _, j := range js {
		select {
		case d.jobs <- j:
		case <-d.ctx.Done():
			return d.ctx.Err()
		}
	}
	return nil
}

// visit handles one entry of the walk: directories are created at once,
// files queued for the workers, later names of a hard-link group kept for
// the end.
func (d *dirRestore) visit(e entry) error {
	n := &e.node
	if k, ok := linkKey(n); ok {
		if _, seen := d.links[k]; seen {
			d.later = append(d.later, e)
			return nil
		}
		d.links[k] = e.rel
	}
	switch n.Type {
	case tree.TypeDir:
		if e.rel != "." {
			err := d.dir(e)
			if errors.Is(err, fsmeta.ErrExists) {
				// Something that is not a directory (say a symlink) has
				// this name: never write through it. Its whole subtree is
				// missing from the output, so it counts as not restored.
				d.damaged(e.rel, fmt.Errorf("a non-directory is in the way, contents not restored: %w", err))
				return errSkipDir
			}
			if err != nil {
				return err
			}
		}
		d.dirs = append(d.dirs, e)
	case tree.TypeFile:
		return d.send(d.batches.add(e))
	default:
		d.other(e)
	}
	return nil
}

// finish makes the hard links, then applies directory metadata, deepest
// first, so that writing children does not disturb directory times.
func (d *dirRestore) finish() {
	for _, e := range d.later {
		d.hardlink(e)
	}
	for i := len(d.dirs) - 1; i >= 0; i-- {
		if d.dirs[i].rel == "." {
			continue
		}
		if err := d.w.ApplyMeta(d.dirs[i].rel, &d.dirs[i].node); err != nil {
			d.opts.Warnf("%s: %v", d.dirs[i].rel, err)
		}
	}
}

func (d *dirRestore) dir(e entry) error {
	if err := d.w.Mkdir(e.rel, &e.node); err != nil {
		return err
	}
	d.mu.Lock()
	d.res.Dirs++
	d.mu.Unlock()
	return nil
}

func (d *dirRestore) skip(rel string) {
	d.opts.Warnf("%s exists, not overwritten", rel)
	d.mu.Lock()
	d.res.Skipped = append(d.res.Skipped, rel)
	d.mu.Unlock()
}

func (d *dirRestore) damaged(rel string, err error) {
	if d.ctx.Err() != nil {
		return // interrupted, not damaged: the restore reports that once
	}
	d.opts.Warnf("%s: not restored: %v", rel, err)
	d.mu.Lock()
	d.res.Damaged = append(d.res.Damaged, rel)
	d.mu.Unlock()
}

func (d *dirRestore) file(e entry) { d.fileWith(e, d.writeContent) }

// restoreBatch restores files whose blobs lie in one range of one pack
// with a single read. Any file whose blob cannot be read or verified from
// that range is restored on its own (which reports it if it is damaged).
func (d *dirRestore) restoreBatch(b *batch) {
	size := b.end - b.start
	data, err := d.r.Store().GetRange(d.ctx, repo.PackKey(b.pack), int64(b.start), int64(size))
	if err == nil && uint64(len(data)) != size {
		err = fmt.Errorf("short read of pack %s", b.pack.Short())
	}
	dec := d.r.Codec().NewDecoder()
	for i, e := range b.files {
		if err != nil {
			d.file(e)
			continue
		}
		loc := b.locs[i]
		off := uint64(loc.Offset) - b.start
		plain, derr := dec.Decode(data[off:off+uint64(loc.Length)], e.node.Content[0])
		if derr != nil {
			d.file(e)
			continue
		}
		d.fileWith(e, func(f *os.File, n *tree.Node) (int64, error) {
			if uint64(len(plain)) != n.Size {
				return 0, fmt.Errorf("content is %d bytes, snapshot says %d", len(plain), n.Size)
			}
			m, err := f.Write(plain)
			if p := d.opts.Progress; p != nil {
				p.Bytes.Add(int64(m))
			}
			return int64(m), err
		})
	}
}

// fileWith creates one file and fills it with content.
func (d *dirRestore) fileWith(e entry, content func(*os.File, *tree.Node) (int64, error)) {
	f, err := d.w.CreateFile(e.rel, &e.node)
	if errors.Is(err, fsmeta.ErrExists) {
		d.skip(e.rel)
		return
	}
	if err != nil {
		d.damaged(e.rel, err)
		return
	}
	written, werr := content(f, &e.node)
	if werr == nil {
		// Metadata through the open descriptor, after the last write:
		// cheaper than resolving the path again, and mtime stays put.
		if err := d.w.ApplyMetaFile(f, e.rel, &e.node); err != nil {
			d.opts.Warnf("%s: %v", e.rel, err)
		}
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		// Never leave a silently truncated file behind.
		if rerr := d.root.Remove(e.rel); rerr != nil {
			werr = errors.Join(werr, rerr)
		}
		d.damaged(e.rel, werr)
		return
	}
	d.mu.Lock()
	d.res.Files++
	d.res.Bytes += written
	d.mu.Unlock()
	if p := d.opts.Progress; p != nil {
		p.Files.Add(1)
	}
}

func (d *dirRestore) writeContent(f *os.File, n *tree.Node) (int64, error) {
	var written int64
	dec := d.r.Codec().NewDecoder() // one chunk's buffers, reused for the next
	for _, b := range n.Content {
		data, err := d.r.LoadBlobWith(d.ctx, dec, b)
		if err != nil {
			return written, err
		}
		if _, err := f.Write(data); err != nil {
			return written, err
		}
		written += int64(len(data))
		if p := d.opts.Progress; p != nil {
			p.Bytes.Add(int64(len(data)))
		}
	}
	if uint64(written) != n.Size {
		return written, fmt.Errorf("content is %d bytes, snapshot says %d", written, n.Size)
	}
	return written, nil
}

func (d *dirRestore) other(e entry) {
	var err error
	switch e.node.Type {
	case tree.TypeSymlink:
		err = d.w.Symlink(e.rel, &e.node)
	default:
		err = d.w.Special(e.rel, &e.node)
	}
	if errors.Is(err, fsmeta.ErrExists) {
		d.skip(e.rel)
		return
	}
	if err != nil {
		d.damaged(e.rel, err)
		return
	}
	if err := d.w.ApplyMeta(e.rel, &e.node); err != nil {
		d.opts.Warnf("%s: %v", e.rel, err)
	}
	d.mu.Lock()
	if e.node.Type == tree.TypeSymlink {
		d.res.Symlinks++
	} else {
		d.res.Specials++
	}
	d.mu.Unlock()
}

func (d *dirRestore) hardlink(e entry) {
	k, _ := linkKey(&e.node)
	first := d.links[k]
	err := d.w.Hardlink(first, e.rel)
	if errors.Is(err, fsmeta.ErrExists) {
		d.skip(e.rel)
		return
	}
	if err != nil {
		// The first name may have been skipped or damaged: restore this
		// one on its own instead.
		d.opts.Warnf("%s: hard link to %s failed (%v); restoring a copy", e.rel, first, err)
		if e.node.Type == tree.TypeFile {
			d.file(e)
		} else {
			d.other(e)
		}
		return
	}
	d.mu.Lock()
	d.res.Hardlinks++
	d.mu.Unlock()
}

// dryRun counts what a restore would write and checks every blob is indexed.
func (d *dirRestore) dryRun(start entry) (*Result, error) {
	err := walk(d.ctx, d.r, start, func(e entry) error {
		switch e.node.Type {
		case tree.TypeDir:
			if e.rel != "." {
				d.res.Dirs++
			}
		case tree.TypeFile:
			for _, b := range e.node.Content {
				if !d.r.Index().Has(b) {
					d.res.Damaged = append(d.res.Damaged, e.rel)
					return nil
				}
			}
			d.res.Files++
			d.res.Bytes += int64(e.node.Size)
		case tree.TypeSymlink:
			d.res.Symlinks++
		default:
			d.res.Specials++
		}
		return nil
	}, d.damaged)
	if err == nil && len(d.res.Damaged) > 0 {
		err = fmt.Errorf("%w: %d damaged", ErrDamaged, len(d.res.Damaged))
	}
	return &d.res, err
}
