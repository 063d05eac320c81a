package restore

import (
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/index"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// Small files are restored in batches: consecutive files of one blob each
// whose blobs lie close together in one pack are read with a single ranged
// request instead of one request per file (55,000 small files cost 55,000
// GETs on S3 before; backups pack a directory's files next to each other,
// so the walk order finds them together).
const (
	maxBatchFiles = 512
	maxBatchSpan  = 8 << 20 // bytes of one ranged read
)

// batch is a run of single-blob files stored in one pack.
type batch struct {
	pack       id.ID
	start, end uint64 // byte range of the pack to read
	used       uint64 // bytes of the files' own blobs
	files      []entry
	locs       []index.Location
}

// job is one unit of restore work: a batch, or a single file.
type job struct {
	file  entry
	batch *batch
}

// batcher groups files into batches as the walk finds them.
type batcher struct {
	r   *repo.Repository
	cur *batch
}

// add takes a file; it returns a job to send when the file cannot join a
// batch (the file itself) or closes the current batch. A nil second
// result means nothing more to send.
func (b *batcher) add(e entry) (send []job) {
	loc, ok := b.single(&e.node)
	if !ok {
		return []job{{file: e}}
	}
	start, end := uint64(loc.Offset), uint64(loc.Offset)+uint64(loc.Length)
	if c := b.cur; c != nil && c.pack == loc.Pack && len(c.files) < maxBatchFiles {
		ns, ne := min(c.start, start), max(c.end, end)
		// Join when the read stays bounded and mostly useful.
		if ne-ns <= maxBatchSpan && ne-ns <= 2*(c.used+end-start) {
			c.start, c.end, c.used = ns, ne, c.used+end-start
			c.files = append(c.files, e)
			c.locs = append(c.locs, loc)
			return nil
		}
	}
	send = b.flush()
	b.cur = &batch{pack: loc.Pack, start: start, end: end, used: end - start,
		files: []entry{e}, locs: []index.Location{loc}}
	return send
}

// flush closes the current batch.
func (b *batcher) flush() []job {
	c := b.cur
	b.cur = nil
	switch {
	case c == nil:
		return nil
	case len(c.files) == 1:
		return []job{{file: c.files[0]}}
	}
	return []job{{batch: c}}
}

// single returns the location of a file's only blob.
func (b *batcher) single(n *tree.Node) (index.Location, bool) {
	if len(n.Content) != 1 {
		return index.Location{}, false
	}
	return b.r.Index().Lookup(n.Content[0])
}
