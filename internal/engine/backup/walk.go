package backup

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cloudstic/cloudstic/internal/engine/exclude"
	"github.com/cloudstic/cloudstic/internal/engine/fsmeta"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/chunker"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
	"github.com/cloudstic/cloudstic/internal/source"
)

type fileJob struct {
	path string
	node *tree.Node
	done chan error
	// recheck is the parent's entry of a file read again though its
	// metadata is the parent's (see unchanged): whether it is counted as
	// changed is decided by its content, once read.
	recheck *tree.Node
	// isNew: the parent snapshot has no such file. A file is counted (new,
	// changed) only once read: one that cannot be read is an error, not a
	// new file.
	isNew bool
	rel   string
}

// blobJob is a chunk for a blob worker to save if it is new.
type blobJob struct {
	id   id.ID
	data []byte
	// inflight, when set, counts jobs whose data aliases a chunker's
	// buffer, and file those of one file: the blob worker calls Done on
	// both once it no longer needs data. Otherwise data is a pooled copy
	// the worker returns to chunkBufs.
	inflight, file *sync.WaitGroup
	// slot, when set, is where the blob worker writes the chunk's id,
	// which it computes itself (id is then unset): see idWindow.
	slot *id.ID
}

// walker is the state of one backup run.
type walker struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	r      *repo.Repository
	opts   Options
	gear   *chunker.Gear
	params chunker.Params
	sink   sink
	src    source.Source
	cap    *fsmeta.Capturer
	filter *exclude.Filter
	// selected lists the entries stored of the directories on the way to
	// several roots (see resolveRoots); nil with one root.
	selected map[string][]string

	files chan fileJob
	blobs chan blobJob
	// settledBefore is the parent backup's start less the racy margin of
	// the root's file system, settledBeforeOther less coarseMargin, for
	// entries on other devices, in Unix nanoseconds (see settled).
	settledBefore, settledBeforeOther int64
	rootDev                           uint64
	// ignoreDevice: files are unchanged whatever their device number (see
	// sameStat).
	ignoreDevice bool
	// dirSlots bounds the goroutines scanning directories ahead of the
	// walk (see subdirs).
	dirSlots chan struct{}
	// chunkers holds the chunkers lent to file workers for files larger
	// than the minimum chunk: one per two workers. Each buffers 2*Max (16
	// MiB) and, as chunks go to the blob workers without a copy, one
	// large file at a time keeps two cores busy compressing; a second
	// chunker on 2 cores added 16-20 MiB of peak RSS to a 1 GB backup and
	// no speed.
	chunkers chan *lentChunker
	// chunkBufs recycles the copies of small files handed to blob workers.
	chunkBufs *pack.Buffers
	filesWG   sync.WaitGroup
	blobsWG   sync.WaitGroup

	errs errList
	n    struct {
		filesNew, filesChanged, filesUnmodified, filesRemoved atomic.Int64
		dirsNew, dirsChanged, dirsUnmodified                  atomic.Int64
		bytesTotal, bytesRead                                 atomic.Int64
	}
}

func newWalker(ctx context.Context, r *repo.Repository, wr *repo.Writer, opts Options, filter *exclude.Filter, gear *chunker.Gear, p chunker.Params) (*walker, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	w := &walker{ctx: ctx, cancel: cancel, r: r, opts: opts, filter: filter, gear: gear, params: p,
		src: opts.Source, cap: fsmeta.NewCapturer(opts.Source),
		files: make(chan fileJob, 4*opts.Workers), blobs: make(chan blobJob, opts.Workers),
		dirSlots: make(chan struct{}, opts.Workers), chunkBufs: pack.NewBuffers(4 * opts.Workers),
		chunkers: make(chan *lentChunker, chunkers(opts.Workers))}
	w.cap.SkipXattrs, w.cap.XattrNamespaces = opts.SkipXattrs, opts.XattrNamespaces
	w.cap.SkipMode, w.cap.SkipFlags = opts.SkipMode, opts.SkipFlags
	w.cap.Warnf = opts.Warnf
	for range cap(w.chunkers) {
		w.chunkers <- &lentChunker{}
	}
	w.sink = newSink(ctx, r, wr, opts)
	return w, nil
}

// chunkers is how many chunkers a backup with this many workers uses.
func chunkers(workers int) int { return max(1, workers/2) }

// run backs up the tree at abs and returns its root tree id. The last
// packs and index file are left to w.sink's flush, which saveSnapshot
// does; a failed run is interrupted (see interrupted). The caller cancels
// w.ctx (w.cancel) once the sink is flushed: the sink's uploads run under
// it.
func (w *walker) run(abs string, fi fs.FileInfo, parentTree id.ID) (id.ID, error) {
	for i := 0; i < 2*w.opts.Workers; i++ {
		w.filesWG.Add(1)
		go w.fileWorker()
	}
	for i := 0; i < w.opts.Workers; i++ {
		w.blobsWG.Add(1)
		go w.blobWorker()
	}
	rootID, err := w.dir(abs, ".", parentTree, nil)
	close(w.files)
	w.filesWG.Wait()
	close(w.blobs)
	w.blobsWG.Wait()
	if err == nil {
		err = context.Cause(w.ctx)
	}
	if err != nil {
		return id.ID{}, interrupted(w.ctx, w.sink, err)
	}
	return rootID, nil
}

func (w *walker) verbosef(format string, args ...any) {
	if w.opts.Verbosef != nil {
		w.opts.Verbosef(format, args...)
	}
}

// relPath joins a directory's path relative to the source ("." for the
// source itself) and an entry name.
func relPath(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}

// fail stops the whole run: something other than an unreadable file broke.
func (w *walker) fail(err error) { w.cancel(err) }

// entryErr records an entry that could not be read, and goes on; unless
// the source itself was lost, which stops the run.
func (w *walker) entryErr(err error) {
	if errors.Is(err, source.ErrLost) {
		w.fail(err)
		return
	}
	w.errs.add(err)
}

// parentNodes loads the parent snapshot's tree for this directory: its
// nodes, and the same nodes by name.
func (w *walker) parentNodes(parentTree id.ID, rel string) ([]tree.Node, map[string]*tree.Node) {
	if parentTree.IsZero() {
		return nil, nil
	}
	t, err := w.r.LoadTree(w.ctx, parentTree)
	if err != nil {
		if w.ctx.Err() != nil {
			// Interrupted, or the lease was lost: the run fails with that
			// cause, and a warning about the parent would only bury it.
			return nil, nil
		}
		if w.opts.Warnf != nil {
			w.opts.Warnf("parent snapshot tree for %s unreadable, reading all files again: %v", rel, err)
		}
		return nil, nil
	}
	m := make(map[string]*tree.Node, len(t.Nodes))
	for i := range t.Nodes {
		m[t.Nodes[i].Name] = &t.Nodes[i]
	}
	return t.Nodes, m
}

// readDir captures the metadata of a directory's entries (what cannot have
// changed since the parent snapshot's parent entries is taken from them,
// see fsmeta.Capturer.NodeSince), less what the exclude rules leave out.
// It also returns the names of subdirectories to keep empty (mount points
// under -one-file-system). Entries that cannot be read are recorded as
// errors and left out; an unreadable source root is fatal.
func (w *walker) readDir(path, rel string, parent map[string]*tree.Node) ([]tree.Node, map[string]bool, error) {
	entries, err := w.src.ReadDir(w.ctx, path)
	if err != nil && rel == "." && !errors.Is(err, source.ErrLost) {
		return nil, nil, fmt.Errorf("%w: %w", ErrSource, err)
	}
	if err != nil {
		w.entryErr(fmt.Errorf("%s: %w", path, err))
	}
	if w.opts.Progress != nil {
		w.opts.Progress.Dirs.Add(1)
	}
	nodes := make([]tree.Node, 0, len(entries))
	var empty map[string]bool
	for _, e := range entries {
		child := filepath.Join(path, e.Name())
		dec, fi, err := w.filter.Entry(w.ctx, path, relPath(rel, e.Name()), e)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				w.entryErr(fmt.Errorf("%s: %w", child, err))
			}
			continue
		}
		switch dec {
		case exclude.Skip:
			continue
		case exclude.KeepEmpty:
			if empty == nil {
				empty = map[string]bool{}
			}
			empty[e.Name()] = true
		}
		node, err := w.nodeSince(child, fi, parent[e.Name()])
		if err != nil {
			w.entryErr(err)
			continue
		}
		nodes = append(nodes, node)
	}
	return nodes, empty, nil
}

// submitFiles reuses the content of unchanged files and hands the others to
// the file workers, returning their jobs.
func (w *walker) submitFiles(path, rel string, nodes []tree.Node, parent map[string]*tree.Node) ([]fileJob, error) {
	var pending []fileJob
	for i := range nodes {
		n := &nodes[i]
		if n.Type != tree.TypeFile {
			continue
		}
		w.n.bytesTotal.Add(int64(n.Size))
		if old := parent[n.Name]; old != nil && w.unchanged(old, n) {
			n.Content, n.Size = old.Content, old.Size // an exported document's size is the parent's
			w.n.filesUnmodified.Add(1)
			if p := w.opts.Progress; p != nil {
				// Done without reading: counted so the progress totals add up.
				p.Files.Add(1)
				p.Bytes.Add(int64(n.Size))
			}
			continue
		}
		job := fileJob{path: filepath.Join(path, n.Name), node: n, done: make(chan error, 1), rel: relPath(rel, n.Name)}
		switch old := parent[n.Name]; {
		case old != nil && w.sameStat(old, n):
			job.recheck = old
		case old == nil:
			job.isNew = true
		}
		select {
		case w.files <- job:
		case <-w.ctx.Done():
			return nil, context.Cause(w.ctx)
		}
		pending = append(pending, job)
	}
	return pending, nil
}

func (w *walker) countRemoved(parent map[string]*tree.Node, nodes []tree.Node) {
	if len(parent) == 0 {
		return
	}
	present := make(map[string]bool, len(nodes))
	for i := range nodes {
		present[nodes[i].Name] = true
	}
	for name, old := range parent {
		if !present[name] && old.Type == tree.TypeFile {
			w.n.filesRemoved.Add(1)
		}
	}
}

// unchanged says whether a file can reuse its content from the parent
// snapshot without being read: same size, mtime, ctime and inode, settled
// before the parent backup began (or, from a cloud drive, the same
// checksum), and every blob still in the index.
func (w *walker) unchanged(old, n *tree.Node) bool {
	if n.Cloud != nil && n.Cloud.Hash != "" {
		// A cloud drive's checksum says it, whatever the times.
		if !sameCloudContent(old, n) {
			return false
		}
	} else if !w.sameStat(old, n) || !w.settled(old) {
		return false
	}
	for _, b := range old.Content {
		if !w.sink.Known(b) {
			return false
		}
	}
	return true
}

// sameStat says whether file n has the type, size, times, inode and device
// (unless ignoreDevice) the parent snapshot recorded for it.
func (w *walker) sameStat(old, n *tree.Node) bool {
	return old.Type == tree.TypeFile && old.Size == n.Size && old.MTime == n.MTime && old.CTime == n.CTime &&
		old.Inode == n.Inode && (w.ignoreDevice || old.Device == n.Device)
}

// countRead counts a file that was read: as new when the parent has none,
// as changed unless it was read again only to be sure (job.recheck) and
// its content is the parent's.
func (w *walker) countRead(job fileJob) {
	if job.isNew {
		w.n.filesNew.Add(1)
		w.verbosef("new      %s", job.rel)
		return
	}
	if job.recheck != nil && slices.Equal(job.node.Content, job.recheck.Content) {
		w.n.filesUnmodified.Add(1)
		return
	}
	w.n.filesChanged.Add(1)
	w.verbosef("changed  %s", job.rel)
}

func (w *walker) saveTree(nodes []tree.Node, failed map[*tree.Node]bool) (id.ID, error) {
	kept := nodes
	if len(failed) > 0 {
		kept = make([]tree.Node, 0, len(nodes))
		for i := range nodes {
			if !failed[&nodes[i]] {
				kept = append(kept, nodes[i])
			}
		}
	}
	data, err := tree.Encode(&tree.Tree{Nodes: kept})
	if err != nil {
		return id.ID{}, err
	}
	tid := w.r.Key().ID(data)
	if _, err := w.sink.Save(w.ctx, pack.TreeBlob, tid, data); err != nil {
		return id.ID{}, err
	}
	return tid, nil
}

func (w *walker) summary() snapshot.Summary {
	st := w.sink.Stats()
	return snapshot.Summary{
		FilesNew: w.n.filesNew.Load(), FilesChanged: w.n.filesChanged.Load(),
		FilesUnmodified: w.n.filesUnmodified.Load(), FilesRemoved: w.n.filesRemoved.Load(),
		DirsNew: w.n.dirsNew.Load(), DirsChanged: w.n.dirsChanged.Load(), DirsUnmodified: w.n.dirsUnmodified.Load(),
		FilesTotal: w.n.filesNew.Load() + w.n.filesChanged.Load() + w.n.filesUnmodified.Load(),
		BytesTotal: w.n.bytesTotal.Load(), BytesRead: w.n.bytesRead.Load(),
		BlobsAdded: st.BlobsAdded, BytesAdded: st.BytesAdded,
	}
}

// errList collects per-file errors from many goroutines.
type errList struct {
	mu   sync.Mutex
	errs []error
}

func (l *errList) add(err error) {
	l.mu.Lock()
	l.errs = append(l.errs, err)
	l.mu.Unlock()
}

func (l *errList) list() []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]error(nil), l.errs...)
}
