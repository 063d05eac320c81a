package restore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"sync/atomic"

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
	sel  *selection
	// fresh: the restore created the output directory, so nothing in it
	// needs looking at before writing.
	fresh bool
	// noUnnamed: the output's file system has no O_TMPFILE.
	noUnnamed atomic.Bool
	// span bounds the ranges of packs read, stream has runs of chunks
	// streamed (restoreShape); the workers share decoders.
	span      uint64
	hugePages bool
	stream    bool
	decoders  *decoderPool

	// Walk state, used by the walking goroutine only.
	jobs    chan job
	batches *batcher
	dirs    []entry // directories, parents first
	later   []entry // second and later names of hard-link groups
	// With Delete: every path of the snapshot the walk met, and the
	// directories whose listing could not be read (never cleaned).
	keep, unlisted map[string]struct{}
	// names finds names that are one on the target (clashRule); keep's
	// keys are folded by it.
	names *nameClash

	mu      sync.Mutex
	res     Result
	links   map[hardlinkKey]string
	written []writtenFile // with Verify
}

func restoreDir(ctx context.Context, r *repo.Repository, start entry, prefix string, opts Options) (*Result, error) {
	sel, err := newSelection(opts)
	if err != nil {
		return nil, err
	}
	d := &dirRestore{ctx: ctx, r: r, opts: opts, sel: sel, links: map[hardlinkKey]string{}}
	if opts.Delete {
		d.keep, d.unlisted = map[string]struct{}{}, map[string]struct{}{}
	}
	if opts.DryRun {
		return d.dryRun(start)
	}
	_, statErr := lstatOutput(opts)
	createdOutput := errors.Is(statErr, fs.ErrNotExist)
	d.fresh = createdOutput
	closeOutput, err := d.openOutput(prefix)
	if err != nil {
		return nil, err
	}
	defer closeOutput()
	folding, err := probeOutput(d.probe(), opts)
	if err != nil {
		return nil, err
	}

	sh := restoreShape(r)
	d.span, d.hugePages, d.stream = sh.span, sh.hugePages, sh.stream
	d.decoders = newDecoderPool(r, min(sh.decoders, opts.Workers), sh.hugePages)
	defer d.decoders.free()
	d.jobs = make(chan job, opts.Workers)
	d.batches = newBatcher(r, opts.Workers, d.span)
	var wg sync.WaitGroup
	for i := 0; i < opts.Workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := newWriteBuffers(d.hugePages)
			defer buf.free()
			for j := range d.jobs {
				switch {
				case j.batch != nil:
					d.restoreBatch(j.batch, buf)
				case j.segment != nil:
					d.segment(j.segment, buf)
				case d.stream:
					d.streamFile(j.file, buf)
				default:
					d.file(j.file, buf)
				}
			}
		}()
	}
	d.names = clashRule(folding, d.damaged)
	walkErr := walk(ctx, r, start, d.visit, d.unreadable, d.names)
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
	if err := d.finish(walkErr == nil); err != nil {
		return &d.res, err
	}
	if createdOutput && start.rel == "." && opts.RootMeta != nil {
		if err := d.w.ApplyRootMeta(opts.RootMeta); err != nil {
			opts.Warnf("%v", err)
		}
	}
	// A failed walk is reported as itself: joining ErrDamaged onto it would
	// let a caller mistake a hard failure for a partial restore.
	if walkErr != nil {
		return &d.res, walkErr
	}
	return &d.res, d.res.err()
}

// err is the error a finished restore reports for what it could not do.
func (res *Result) err() error {
	var errs []error
	if len(res.Damaged) > 0 {
		errs = append(errs, fmt.Errorf("%w: %d damaged", ErrDamaged, len(res.Damaged)))
	}
	if len(res.VerifyFailed) > 0 {
		errs = append(errs, fmt.Errorf("%w: %d files", ErrVerify, len(res.VerifyFailed)))
	}
	return errors.Join(errs...)
}

// openOutput opens the output directory for writing and, for -path, creates
// the selected entry's parent directories (their metadata is not
// restored): -path keeps the entry's place in the tree.
func (d *dirRestore) openOutput(prefix string) (func(), error) {
	wopts := fsmeta.DefaultWriterOptions()
	wopts.Logf = d.opts.Warnf
	wopts.NoSetuid, wopts.NoDevices, wopts.NoCapabilities = d.opts.NoSetuid, d.opts.NoDevices, d.opts.NoCapabilities
	w, err := newOutputWriter(d.opts, wopts)
	if err != nil {
		return nil, err
	}
	d.w = w
	closeAll := func() {
		// Deferred by restoreDir: the Result it returned is d.res, so the
		// caller sees the final counts.
		d.res.Privileges = w.Privileges()
		w.Close() //nolint:errcheck // directory handles: nothing was written through them
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
	if e.rel != "." {
		ok, parents, err := d.sel.visit(e)
		if err != nil || !ok {
			return err
		}
		for _, p := range parents {
			d.noteMapped(p)
			if err := d.dirEntry(p); errors.Is(err, errSkipDir) {
				return nil // reported; nothing can be written below it
			} else if err != nil {
				return err
			}
		}
	}
	d.noteMapped(e)
	if e.node.Type == tree.TypeDir {
		return d.dirEntry(e)
	}
	if d.keep != nil {
		d.keep[d.keepKey(e.rel)] = struct{}{}
	}
	if k, ok := linkKey(&e.node); ok {
		if _, seen := d.links[k]; seen {
			d.later = append(d.later, e)
			return nil
		}
		d.links[k] = e.rel
	}
	if e.node.Type != tree.TypeFile {
		d.other(e)
		return nil
	}
	act, err := d.plan(&e)
	switch {
	case err != nil:
		d.damaged(e.rel, err)
	case act == actSkip:
	case act == actKeep:
		d.unchanged(e)
	default:
		if segs := d.segments(&e); segs != nil {
			return d.sendLarge(e, segs)
		}
		return d.send(d.batches.add(d.ctx, e))
	}
	return nil
}

// dirEntry creates a directory of the walk (the start "." exists).
func (d *dirRestore) dirEntry(e entry) error {
	if d.keep != nil {
		d.keep[d.keepKey(e.rel)] = struct{}{}
	}
	if e.rel != "." {
		if err := d.dir(e); err != nil {
			return err
		}
	}
	d.dirs = append(d.dirs, e)
	return nil
}

// unreadable reports a directory whose listing could not be read.
func (d *dirRestore) unreadable(rel string, err error) {
	if d.unlisted != nil {
		d.unlisted[rel] = struct{}{}
	}
	d.damaged(rel, err)
}

// finish makes the hard links, removes what -delete removes, verifies the
// written files, then applies directory metadata, deepest first, so that
// writing children does not disturb directory times. Only a complete walk
// (walked) may delete: a directory it did not reach looks empty.
func (d *dirRestore) finish(walked bool) error {
	for _, e := range d.later {
		d.hardlink(e)
	}
	if d.opts.Delete && walked && !d.fresh {
		if err := d.deleteExtra(); err != nil {
			return err
		}
	}
	if d.opts.Verify {
		if err := d.verify(); err != nil {
			return err
		}
	}
	for i := len(d.dirs) - 1; i >= 0; i-- {
		if d.dirs[i].rel == "." {
			continue
		}
		if err := d.w.ApplyMeta(d.dirs[i].rel, &d.dirs[i].node); err != nil {
			d.opts.Warnf("%s: %v", d.dirs[i].rel, err)
		}
	}
	return nil
}

// dir creates the directory of e. A non-directory in its way is replaced
// when -overwrite allows, else reported: its contents are then skipped.
func (d *dirRestore) dir(e entry) error {
	err := d.w.Mkdir(e.rel, &e.node)
	if errors.Is(err, fsmeta.ErrExists) {
		var act action
		if act, err = d.plan(&e); err == nil && act == actReplace {
			if err = d.w.Remove(e.rel); err == nil {
				err = d.w.Mkdir(e.rel, &e.node)
				d.count(func(r *Result) { r.Replaced++ })
			}
		} else if err == nil {
			err = fsmeta.ErrExists
		}
	}
	if errors.Is(err, fsmeta.ErrExists) {
		// Something that is not a directory (say a symlink) has this
		// name: never write through it. Its whole subtree is missing
		// from the output, so it counts as not restored.
		d.damaged(e.rel, fmt.Errorf("a non-directory is in the way, contents not restored: %w", err))
		return errSkipDir
	}
	if err != nil {
		return err
	}
	d.count(func(r *Result) { r.Dirs++ })
	return nil
}

// count updates the result under the lock.
func (d *dirRestore) count(f func(*Result)) {
	d.mu.Lock()
	f(&d.res)
	d.mu.Unlock()
}

func (d *dirRestore) skip(rel, why string) {
	d.opts.Warnf("%s %s", rel, why)
	d.count(func(r *Result) { r.Skipped = append(r.Skipped, rel) })
}

func (d *dirRestore) damaged(rel string, err error) {
	if d.ctx.Err() != nil {
		return // interrupted, not damaged: the restore reports that once
	}
	d.opts.Warnf("%s: not restored: %v", rel, err)
	d.count(func(r *Result) { r.Damaged = append(r.Damaged, rel) })
}

// noteMapped warns that e is written under another name than the
// snapshot's: one this host can hold (fsmeta.LocalName; on Windows "a:b"
// is written as "a%3Ab", docs/platforms.md).
func (d *dirRestore) noteMapped(e entry) {
	if e.rel == "." {
		return
	}
	if local, changed := fsmeta.LocalName(e.node.Name); changed {
		d.opts.Warnf("%s: restored as %q: this system cannot hold the name as it is", e.rel, local)
	}
}

// dryRun counts what a restore would write and checks every blob is indexed.
func (d *dirRestore) dryRun(start entry) (*Result, error) {
	clash := func(rel string, err error) {
		d.opts.Warnf("%s: would not be restored: %v", rel, err)
		d.res.Damaged = append(d.res.Damaged, rel)
	}
	folding, err := probeDryRun(d.probe(), d.opts.Output)
	if err != nil {
		// A dry run may look at a directory it cannot write to.
		d.opts.Warnf("%v; names that differ only in case are taken as different", err)
	}
	d.names = clashRule(folding, clash)
	err = walk(d.ctx, d.r, start, func(e entry) error {
		if e.rel != "." {
			ok, parents, err := d.sel.visit(e)
			if err != nil || !ok {
				return err
			}
			d.res.Dirs += int64(len(parents))
		}
		d.noteMapped(e)
		if d.keep != nil {
			d.keep[d.keepKey(e.rel)] = struct{}{}
		}
		switch e.node.Type {
		case tree.TypeDir:
			if e.rel != "." {
				d.res.Dirs++
			}
			d.dirs = append(d.dirs, e)
		case tree.TypeFile:
			for _, b := range e.node.Content {
				// A local index that cannot be read is no damage of
				// the repository: it fails the restore.
				known, err := d.r.Index().Contains(d.ctx, b)
				if err != nil {
					return err
				}
				if !known {
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
	}, d.unreadable, d.names)
	if err == nil && d.opts.Delete {
		err = d.listExtra()
	}
	if err == nil && len(d.res.Damaged) > 0 {
		err = fmt.Errorf("%w: %d damaged", ErrDamaged, len(d.res.Damaged))
	}
	return &d.res, err
}
