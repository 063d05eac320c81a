package snapcopy

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/cloudstic/cloudstic/internal/engine/treewalk"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/chunker"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// fileReaders is how many files of a directory have their blobs copied at
// once. Each blob is one request to the source (on S3, a round trip): one
// at a time, a copy mostly waits. Subdirectories are copied one after the
// other, so at most fileReaders blobs are read at any moment.
const fileReaders = 4

// copier copies the trees and contents of snapshots from src into dst. It
// remembers what it copied during one run, so that contents shared by
// several snapshots are read once.
type copier struct {
	src, dst *repo.Repository
	wr       *repo.Writer // writes to dst; nil on a dry run
	opts     Options
	// sameIDs: both keys give every blob the same id, so a blob the
	// destination has is known without reading it from the source.
	sameIDs bool
	// rechunk: the chunker parameters differ; file contents are chunked
	// again with the destination's gear table and sizes.
	rechunk bool
	gear    *chunker.Gear
	params  chunker.Params
	ch      *chunker.Chunker // reused for every file; nil until needed

	saver *repo.Saver       // of the snapshot being copied
	files map[id.ID][]id.ID // rechunked contents, by a hash of the source's content list
	trees map[id.ID]copiedTree

	mu        sync.Mutex // guards blobs and blobsRead: files are copied concurrently
	blobs     map[id.ID]id.ID
	blobsRead int64

	blobsAdded, bytesAdded int64
}

func newCopier(src, dst *repo.Repository, wr *repo.Writer, opts Options) *copier {
	probe := []byte("cloudstic copy: do both keys give the same blob ids?")
	sc, dc := src.Config().Chunker, dst.Config().Chunker
	return &copier{src: src, dst: dst, wr: wr, opts: opts,
		sameIDs: src.Key().ID(probe) == dst.Key().ID(probe),
		rechunk: sc != dc,
		gear:    chunker.NewGear(dst.Key().ChunkerKey()),
		params:  chunker.Params{Min: dc.Min, Avg: dc.Avg, Max: dc.Max},
		blobs:   map[id.ID]id.ID{}, files: map[id.ID][]id.ID{}, trees: map[id.ID]copiedTree{}}
}

// copySnapshot copies one snapshot's trees and data, flushes them with
// beforeSave run beside the last index file's write, once every pack is
// stored (repo.Saver.FlushWith), and stores the snapshot object, last,
// once both succeeded.
func (c *copier) copySnapshot(ctx context.Context, s snapshot.WithID, beforeSave func(context.Context) error) (id.ID, error) {
	uploaders := c.opts.Uploaders
	if uploaders < 1 {
		uploaders = 2
	}
	c.saver = c.wr.NewSaver(ctx, uploaders, c.opts.Compression)
	root, _, err := c.copyTree(ctx, s.Tree, nil)
	if err != nil {
		// What was stored is indexed, under the still-held lease: a
		// re-run of the copy reuses it.
		if ierr := c.saver.Interrupt(ctx); ierr != nil {
			err = fmt.Errorf("%w (and %w)", err, ierr)
		}
		c.countSaved()
		return id.ID{}, err
	}
	err = c.saver.FlushWith(ctx, beforeSave)
	c.countSaved()
	if err != nil {
		return id.ID{}, err
	}
	next := *s.Snapshot
	next.Tree = root
	if s.Root != nil {
		meta := *s.Root
		meta.Subtree = root
		next.Root = &meta
	}
	// The parent names a snapshot of the source repository.
	next.Parent = id.ID{}
	next.Original = s.OriginalID(s.ID)
	return c.wr.SaveSnapshot(ctx, &next)
}

func (c *copier) countSaved() {
	st := c.saver.Stats()
	c.blobsAdded += st.BlobsAdded
	c.bytesAdded += st.BytesAdded
}

// copiedTree is a tree of the source as copied: its id in the
// destination, and how many levels of entries are below it.
type copiedTree struct {
	id     id.ID
	height int
}

// copyTree copies the tree tid of the directory dir (nil: the root) and
// everything below it, and returns the id of its copy and its height. A
// tree shared by several directories is copied once; directories nested
// deeper than tree.MaxDepth are refused, which bounds the recursion.
func (c *copier) copyTree(ctx context.Context, tid id.ID, dir *treewalk.Path) (id.ID, int, error) {
	if ct, ok := c.trees[tid]; ok {
		return ct.id, ct.height, c.within(dir, ct.height)
	}
	if err := ctx.Err(); err != nil {
		return id.ID{}, 0, err
	}
	t, err := c.src.LoadTree(ctx, tid)
	if err != nil {
		return id.ID{}, 0, err
	}
	if len(t.Nodes) > 0 {
		if err := c.within(dir, 1); err != nil {
			return id.ID{}, 0, err
		}
	}
	out := tree.Tree{Nodes: slices.Clone(t.Nodes)}
	if err := c.copyFiles(ctx, out.Nodes); err != nil {
		return id.ID{}, 0, err
	}
	height := min(len(out.Nodes), 1)
	for i := range out.Nodes {
		if n := &out.Nodes[i]; n.Type == tree.TypeDir {
			var h int
			if n.Subtree, h, err = c.copyTree(ctx, n.Subtree, dir.Child(n.Name)); err != nil {
				return id.ID{}, 0, err
			}
			height = max(height, 1+h)
		}
	}
	data, err := tree.Encode(&out)
	if err != nil {
		return id.ID{}, 0, err
	}
	nid := c.dst.Key().ID(data)
	if _, err := c.saver.Save(ctx, pack.TreeBlob, nid, data); err != nil {
		return id.ID{}, 0, err
	}
	c.trees[tid] = copiedTree{id: nid, height: height}
	return nid, height, nil
}

// within checks that a tree of height levels fits below dir.
func (c *copier) within(dir *treewalk.Path, height int) error {
	if dir.Depth()+height > tree.MaxDepth {
		return fmt.Errorf("%s: %w", dir.Join(""), tree.ErrTooDeep)
	}
	return nil
}

// copyFiles copies the contents of the files among nodes and sets each
// node's Content to the destination's list: several files at once, unless
// they are chunked again (one chunker, reused).
func (c *copier) copyFiles(ctx context.Context, nodes []tree.Node) error {
	limit := fileReaders
	if c.rechunk {
		limit = 1
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(limit)
	for i := range nodes {
		n := &nodes[i]
		if n.Type == tree.TypeDir || len(n.Content) == 0 {
			continue
		}
		g.Go(func() error {
			content, err := c.copyContent(gctx, n.Content)
			if err != nil {
				return fmt.Errorf("%s: %w", n.Name, err)
			}
			n.Content = content
			return nil
		})
	}
	return g.Wait()
}

// copyContent copies a file's content blobs and returns the destination's
// list: blob for blob, or chunked again when the chunker parameters differ.
func (c *copier) copyContent(ctx context.Context, content []id.ID) ([]id.ID, error) {
	if c.rechunk {
		return c.rechunkContent(ctx, content)
	}
	out := make([]id.ID, len(content))
	for i, b := range content {
		nid, err := c.copyBlob(ctx, b)
		if err != nil {
			return nil, err
		}
		out[i] = nid
	}
	return out, nil
}

// copyBlob copies one data blob and returns its id in the destination.
func (c *copier) copyBlob(ctx context.Context, b id.ID) (id.ID, error) {
	c.mu.Lock()
	nid, ok := c.blobs[b]
	c.mu.Unlock()
	if ok {
		return nid, nil
	}
	if c.sameIDs && c.saver.Known(b) {
		c.remember(b, b)
		return b, nil
	}
	// Two files sharing a blob may both read it: Save stores it once.
	data, err := c.readBlob(ctx, b)
	if err != nil {
		return id.ID{}, err
	}
	nid = c.dst.Key().ID(data)
	if _, err := c.saver.Save(ctx, pack.DataBlob, nid, data); err != nil {
		return id.ID{}, err
	}
	c.remember(b, nid)
	return nid, nil
}

func (c *copier) remember(b, nid id.ID) {
	c.mu.Lock()
	c.blobs[b] = nid
	c.mu.Unlock()
}

// readBlob reads and verifies one data blob of the source.
func (c *copier) readBlob(ctx context.Context, b id.ID) ([]byte, error) {
	data, err := c.src.LoadBlob(ctx, b)
	if err != nil {
		return nil, fmt.Errorf("reading blob %s from the source: %w", b.Short(), err)
	}
	c.mu.Lock()
	c.blobsRead++
	c.mu.Unlock()
	return data, nil
}

// rechunkContent streams a file's blobs through the destination's chunker
// and stores the chunks; memory stays within the chunker's buffer and one
// source blob.
func (c *copier) rechunkContent(ctx context.Context, content []id.ID) ([]id.ID, error) {
	h := sha256.New()
	for _, b := range content {
		h.Write(b[:]) // hash.Hash.Write never fails
	}
	var key id.ID
	h.Sum(key[:0])
	if out, ok := c.files[key]; ok {
		return out, nil
	}
	r := &blobReader{ctx: ctx, c: c, content: content}
	if c.ch == nil {
		ch, err := chunker.New(r, c.gear, c.params)
		if err != nil {
			return nil, err
		}
		c.ch = ch
	} else {
		c.ch.Reset(r)
	}
	var out []id.ID
	for {
		chunk, err := c.ch.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		nid := c.dst.Key().ID(chunk)
		// Save seals a copy of chunk before it returns.
		if _, err := c.saver.Save(ctx, pack.DataBlob, nid, chunk); err != nil {
			return nil, err
		}
		out = append(out, nid)
	}
	c.files[key] = out
	return out, nil
}

// blobReader reads a file's contents blob by blob from the source.
type blobReader struct {
	ctx     context.Context
	c       *copier
	content []id.ID
	cur     []byte
}

func (r *blobReader) Read(p []byte) (int, error) {
	for len(r.cur) == 0 {
		if len(r.content) == 0 {
			return 0, io.EOF
		}
		data, err := r.c.readBlob(r.ctx, r.content[0])
		if err != nil {
			return 0, err
		}
		r.cur, r.content = data, r.content[1:]
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}
