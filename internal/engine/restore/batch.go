package restore

import (
	"cmp"
	"container/list"
	"context"
	"slices"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/index"
)

// Small files are restored in batches: files whose chunks lie in one range
// of one pack are read with a single ranged request instead of
// one request per file (55,000 small files cost 55,000 GETs on S3 before).
//
// The walk meets files in tree order, but a backup packs the files of the
// few directories its workers read at once together, in the order they
// finish, so a pack's files come mixed with other packs' and its blobs out
// of order. Files are therefore planned per pack, as restic does: those
// met are held, grouped by pack, up to maxWindowFiles of them (a bounded
// window: a restore of millions of files holds no more, as many as the 64
// open batches of 512 files held before); when
// the window is full, the pack whose group was added to least recently is
// closed (its files most likely all met). A closed group is sorted by
// offset and cut into ranges: a range ends where the next blob would take
// it past the span of one read (maxBatchSpan, streamSpan), or lies further than the
// store's request cost (repo.RequestCost: a gap is read over when reading
// it costs less than another request), or, on a store whose requests are
// cheap, after maxBatchFiles files, which spreads the writing over the
// workers. Over S3 a pack's files thus cost about one request (streamed),
// where a window of 512-file batches cost ten times as many.
const (
	maxBatchFiles = 512     // per batch, on a store whose requests are cheap
	maxBatchSpan  = 8 << 20 // bytes of one ranged read
	// streamSpan bounds the streamed reads from a store across a network
	// instead (restoreShape, stream.go): a request held open, not a
	// buffer; a pack of the default size fits.
	streamSpan     = 32 << 20
	maxWindowFiles = 32768 // files held by the open groups
	// minFlushFiles is the fewest files per batch the walk's end cuts
	// groups into for the workers' sake (see flush).
	minFlushFiles = 64
	// remoteCost: a store declaring a request cost of at least this
	// much (store.RemoteRequestCost) has batches bounded by their span
	// only.
	remoteCost = 1 << 20
)

// batch is a set of files stored in one range of one pack, sorted by
// offset.
type batch struct {
	pack       id.ID
	start, end uint64 // byte range of the pack to read
	files      []entry
	locs       [][]index.Location // of each file's chunks
}

// job is one unit of restore work: a batch, a single file, or a segment of
// a large one.
type job struct {
	file    entry
	batch   *batch
	segment *segment // of a large file
}

// pending is a file held in a group with the locations of its chunks and
// the range of the pack they lie in.
type pending struct {
	e          entry
	locs       []index.Location
	start, end uint64
}

// group is the held files of one pack.
type group struct {
	pack  id.ID
	files []pending
	elem  *list.Element // in batcher.lru
}

// batcher groups files into batches as the walk finds them.
type batcher struct {
	r        *repo.Repository
	gap      uint64 // largest gap between two blobs a batch reads over
	maxFiles int    // per batch; 0: no bound
	window   int    // files held at most
	span     uint64 // bytes of one ranged read at most
	workers  int    // restoring in parallel

	groups map[id.ID]*group
	lru    *list.List // of *group, least recently added to first
	held   int
}

// newBatcher returns a batcher for r's store, workers workers and ranged
// reads of at most span bytes.
func newBatcher(r *repo.Repository, workers int, span uint64) *batcher {
	b := &batcher{r: r, gap: uint64(max(r.RequestCost(), 0)), maxFiles: maxBatchFiles, window: maxWindowFiles,
		span: span, workers: max(workers, 1),
		groups: map[id.ID]*group{}, lru: list.New()}
	if r.RequestCost() >= remoteCost {
		b.maxFiles = 0
	}
	return b
}

// add takes a file and returns the jobs that are ready to send: the file
// itself when it cannot join a batch, and batches closed to make room.
func (b *batcher) add(ctx context.Context, e entry) []job {
	p, ok := b.locate(ctx, e)
	if !ok {
		return []job{{file: e}}
	}
	pk := p.locs[0].Pack
	g := b.groups[pk]
	if g == nil {
		g = &group{pack: pk}
		g.elem = b.lru.PushBack(g)
		b.groups[pk] = g
	} else {
		b.lru.MoveToBack(g.elem)
	}
	g.files = append(g.files, p)
	b.held++
	var send []job
	for b.held > b.window {
		send = append(send, b.close(b.lru.Front().Value.(*group), b.maxFiles)...)
	}
	return send
}

// flush closes every open group, least recently added to first. The files
// held are the last: they are cut into batches of at most 1/workers of
// them (but minFlushFiles), so that the workers share the writing of a
// restore of one pack's files, at the cost of a request or two per worker.
func (b *batcher) flush() []job {
	limit := max((b.held+b.workers-1)/b.workers, minFlushFiles)
	if b.maxFiles > 0 {
		limit = min(limit, b.maxFiles)
	}
	var send []job
	for b.lru.Len() > 0 {
		send = append(send, b.close(b.lru.Front().Value.(*group), limit)...)
	}
	return send
}

// close removes group g and returns its files as jobs: batches of ranges
// of its pack of at most maxFiles files (0: any number), and files alone in
// theirs.
func (b *batcher) close(g *group, maxFiles int) []job {
	b.lru.Remove(g.elem)
	delete(b.groups, g.pack)
	b.held -= len(g.files)
	slices.SortStableFunc(g.files, func(x, y pending) int { return cmp.Compare(x.start, y.start) })
	var send []job
	var c *batch
	for _, p := range g.files {
		if c != nil && (maxFiles == 0 || len(c.files) < maxFiles) && b.joins(c, p.start, p.end) {
			c.end = max(c.end, p.end)
			c.files = append(c.files, p.e)
			c.locs = append(c.locs, p.locs)
			continue
		}
		if c != nil {
			send = append(send, c.job())
		}
		c = &batch{pack: g.pack, start: p.start, end: p.end, files: []entry{p.e}, locs: [][]index.Location{p.locs}}
	}
	if c != nil {
		send = append(send, c.job())
	}
	return send
}

// joins says whether the blob at [start, end), at or after c's first,
// extends batch c.
func (b *batcher) joins(c *batch, start, end uint64) bool {
	if max(c.end, end)-c.start > b.span {
		return false
	}
	return start <= c.end || start-c.end <= b.gap
}

// job is c's job: a batch, or its file alone.
func (c *batch) job() job {
	if len(c.files) == 1 {
		return job{file: c.files[0]}
	}
	return job{batch: c}
}

// locate returns e as a file of a batch (see locateIn). A file of several
// chunks joins only on a store whose requests are dear: on a local one its
// own read costs little, and alone it is written by a worker of its own.
func (b *batcher) locate(ctx context.Context, e entry) (pending, bool) {
	if len(e.node.Content) > 1 && b.maxFiles > 0 {
		return pending{}, false
	}
	return locateIn(ctx, b.r, e, b.span)
}

// locateIn returns e as a file of a batch: when all its chunks are in r's
// index, in one pack, within span bytes of each other.
func locateIn(ctx context.Context, r *repo.Repository, e entry, span uint64) (pending, bool) {
	content := e.node.Content
	if len(content) == 0 {
		return pending{}, false
	}
	p := pending{e: e, locs: make([]index.Location, 0, len(content))}
	for i, blob := range content {
		loc, ok := r.Index().Lookup(ctx, blob)
		if !ok || (i > 0 && loc.Pack != p.locs[0].Pack) {
			return pending{}, false
		}
		start, end := uint64(loc.Offset), uint64(loc.Offset)+uint64(loc.Length)
		if i == 0 {
			p.start, p.end = start, end
		}
		p.start, p.end = min(p.start, start), max(p.end, end)
		if p.end-p.start > span {
			return pending{}, false
		}
		p.locs = append(p.locs, loc)
	}
	return p, true
}
