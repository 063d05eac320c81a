package index

import (
	"context"
	"slices"
	"sort"
	"sync"

	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
)

// Location is where a blob is stored.
type Location struct {
	Pack id.ID
	pack.Entry
}

// minDelta is the size the delta may reach before it is merged whatever
// the size of the index; beyond it the delta is merged once it holds a
// sixteenth of the merged entries, which bounds both its memory and the
// total cost of merging (each merge copies the sorted keys).
const minDelta = 1 << 16

// Index is the merged in-memory index. Safe for concurrent use.
//
// Every entry added is kept in table, grouped by pack in the order packs
// were added (a pack is added once: later listings of a known pack are
// ignored). sorted holds a key per merged entry, duplicates included,
// ordered by blob id and then by position, so that the first entry of a
// blob is its canonical location. Entries added since the last merge are
// found through delta.
type Index struct {
	mu        sync.RWMutex
	table     table
	packs     []id.ID
	packPos   map[id.ID]uint32
	packStart []uint32 // position of each pack's first entry in table
	sorted    []key
	fanout    []uint32
	merged    int // entries of table covered by sorted
	distinct  int // distinct blobs in sorted
	delta     map[id.ID]uint32
	base      *Disk   // nil: every entry is in memory (see SetBase)
	rebuild   Rebuild // replaces base when it cannot be read; nil: none
	baseErr   error   // a failure to read base that was not repaired
	broken    error   // a failure to read base, whose rebuild is under way or was stopped
}

// New returns an empty index.
func New() *Index {
	mem := newMapped()
	x := &Index{table: table{mem: mem}, packPos: make(map[id.ID]uint32), delta: make(map[id.ID]uint32)}
	releaseWith(x, mem)
	return x
}

// Add records the blobs of one pack. A blob already known keeps its first
// location (duplicates from concurrent backups are harmless); a pack
// already known is ignored (every listing of a pack names the same blobs).
func (x *Index) Add(packID id.ID, entries []pack.Entry) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.add(packID, entries)
}

// add is Add, for callers holding x.mu.
func (x *Index) add(packID id.ID, entries []pack.Entry) {
	if _, ok := x.packPos[packID]; ok {
		return
	}
	p := uint32(len(x.packs))
	x.packPos[packID] = p
	x.packs = append(x.packs, packID)
	x.packStart = append(x.packStart, uint32(x.table.n))
	for _, e := range entries {
		pos := x.table.n
		x.table.push(newEntry(p, e))
		if _, ok := x.find(&e.ID); !ok && !x.baseHas(&e.ID) {
			x.delta[e.ID] = uint32(pos)
		}
	}
	if len(x.delta) >= max(minDelta, len(x.sorted)/16) {
		x.merge()
	}
}

// merge moves the entries added since the last merge into sorted.
func (x *Index) merge() {
	if x.merged == x.table.n {
		return
	}
	add := make([]key, 0, x.table.n-x.merged)
	for pos := x.merged; pos < x.table.n; pos++ {
		add = append(add, makeKey(&x.table.at(pos).id, pos))
	}
	slices.Sort(add)
	sorted := x.table.mem.keys(len(x.sorted) + len(add))
	mergeKeys(sorted, x.sorted, add)
	x.table.mem.freeKeys(x.sorted)
	x.sorted = sorted
	x.distinct = x.sortRuns(x.sorted)
	x.fanout = buildFanout(x.sorted)
	x.merged = x.table.n
	clear(x.delta)
}

// Merge folds the blobs added since the last merge into the sorted part
// (a backup calls it when it finishes; lookups work either way).
func (x *Index) Merge() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.merge()
}

// search returns the position in sorted of blob's first key, if merged.
func (x *Index) search(blob *id.ID) (int, bool) {
	if len(x.sorted) == 0 {
		return 0, false
	}
	p := prefixOf(blob)
	lo, hi := int(x.fanout[p>>(32-fanoutBits)]), int(x.fanout[p>>(32-fanoutBits)+1])
	i := lo + sort.Search(hi-lo, func(i int) bool { return x.sorted[lo+i].prefix() >= p })
	for ; i < hi && x.sorted[i].prefix() == p; i++ {
		if x.table.at(x.sorted[i].pos()).id == *blob {
			return i, true
		}
	}
	return 0, false
}

// find returns the table position of blob's canonical entry.
func (x *Index) find(blob *id.ID) (int, bool) {
	if i, ok := x.search(blob); ok {
		return x.sorted[i].pos(), true
	}
	pos, ok := x.delta[*blob]
	return int(pos), ok
}

func (x *Index) location(pos int) Location {
	e := x.table.at(pos)
	return Location{Pack: x.packs[e.pack], Entry: e.packEntry()}
}

// Find returns a blob's location: the on-disk part's when it has the
// blob (the copy Each reports too), else the in-memory one. An error
// means the on-disk part could not be read, nor rebuilt (see Rebuild): it
// wraps the failure (ErrDiskCorrupt for a damaged file) and names the
// file, or ctx's error when ctx ended before the part was rebuilt (the
// rebuild runs under ctx), and says nothing of whether the repository
// has the blob.
func (x *Index) Find(ctx context.Context, blob id.ID) (Location, bool, error) {
	var loc Location
	var ok bool
	err := x.retry(ctx, func() error {
		var err error
		loc, ok, err = x.baseLookup(&blob)
		if !ok {
			if pos, found := x.find(&blob); found {
				loc, ok, err = x.location(pos), true, nil
			}
		}
		return err
	})
	return loc, ok, err
}

// Lookup is Find reporting a failure to read the on-disk part as an
// unknown blob: for callers to whom an unknown blob only costs time.
// Where "unknown" would be reported as missing data, call Find.
func (x *Index) Lookup(ctx context.Context, blob id.ID) (Location, bool) {
	loc, ok, err := x.Find(ctx, blob)
	return loc, ok && err == nil
}

// Contains reports whether the blob is known; its error is Find's.
func (x *Index) Contains(ctx context.Context, blob id.ID) (bool, error) {
	var ok bool
	err := x.retry(ctx, func() error {
		if _, ok = x.find(&blob); ok {
			return nil
		}
		return x.readBase(func(d *Disk) error {
			var err error
			_, ok, err = d.lookup(&blob)
			return err
		})
	})
	return ok && err == nil, err
}

// Has is Contains reporting a failure to read the on-disk part as an
// unknown blob (a backup then stores it again, which is safe); see
// Lookup.
func (x *Index) Has(ctx context.Context, blob id.ID) bool {
	ok, err := x.Contains(ctx, blob)
	return ok && err == nil
}

// Len is the number of distinct blobs (with an on-disk part, a blob both
// there and in memory counts twice).
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := x.distinct + len(x.delta)
	if x.base != nil {
		n += x.base.Len()
	}
	return n
}

// PackEntries returns the blobs an index file listed for a pack (all of
// them, including blobs whose canonical copy is in another pack), or nil.
// It knows only the packs held in memory, not an on-disk part's (repair,
// its caller once, now reads the index files' listings itself: tests use
// it to read back what a run wrote).
func (x *Index) PackEntries(packID id.ID) []pack.Entry {
	x.mu.RLock()
	defer x.mu.RUnlock()
	p, ok := x.packPos[packID]
	if !ok {
		return nil
	}
	end := x.table.n
	if int(p)+1 < len(x.packStart) {
		end = int(x.packStart[p+1])
	}
	out := make([]pack.Entry, 0, end-int(x.packStart[p]))
	for pos := int(x.packStart[p]); pos < end; pos++ {
		out = append(out, x.table.at(pos).packEntry())
	}
	return out
}

// eachCanonical calls fn with the table position of every merged blob's
// canonical entry, in id order.
func (x *Index) eachCanonical(fn func(pos int)) {
	for i, k := range x.sorted {
		if i > 0 && k.prefix() == x.sorted[i-1].prefix() &&
			x.table.at(k.pos()).id == x.table.at(x.sorted[i-1].pos()).id {
			continue
		}
		fn(k.pos())
	}
}
