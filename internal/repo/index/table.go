package index

import (
	"bytes"
	"encoding/binary"
	"slices"

	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
)

// entry is one blob's location: 48 bytes, against ~150 for the map entry
// of a Location it replaces.
type entry struct {
	id     id.ID
	pack   uint32 // position of the pack in Index.packs
	offset uint32
	length uint32 // sealed length; treeBit set for tree blobs
	plain  uint32 // 0: unknown
}

// treeBit marks tree blobs in entry.length (lengths are at most
// pack.MaxBlobSize, far below it).
const treeBit = 1 << 31

func newEntry(packPos uint32, e pack.Entry) entry {
	length := e.Length &^ treeBit
	if e.Type == pack.TreeBlob {
		length |= treeBit
	}
	return entry{id: e.ID, pack: packPos, offset: e.Offset, length: length, plain: e.Plain}
}

func (e *entry) packEntry() pack.Entry {
	t := pack.DataBlob
	if e.length&treeBit != 0 {
		t = pack.TreeBlob
	}
	return pack.Entry{Type: t, ID: e.id, Offset: e.offset, Length: e.length &^ treeBit, Plain: e.plain}
}

// pageBits sizes the pages of a table: 32768 entries, 1.5 MiB.
const (
	pageBits = 15
	pageSize = 1 << pageBits
)

// table holds entries in fixed-size pages of mapped memory, so that
// growing it never copies (a doubling slice of 10 M entries would briefly
// hold 1.5 times its size). Entries never move: a position names one for
// good.
type table struct {
	mem   *mapped
	pages [][]entry
	n     int
}

func (t *table) at(pos int) *entry { return &t.pages[pos>>pageBits][pos&(pageSize-1)] }

func (t *table) push(e entry) {
	if t.n>>pageBits == len(t.pages) {
		t.pages = append(t.pages, t.mem.entries(pageSize))
	}
	last := &t.pages[len(t.pages)-1]
	*last = append(*last, e)
	t.n++
}

// key is what the sorted array holds per entry: the first 4 bytes of the
// blob id (the high half, so that keys sort like ids) and the entry's
// position. Ties on the prefix are settled by comparing whole ids.
type key uint64

func makeKey(blob *id.ID, pos int) key {
	return key(uint64(binary.BigEndian.Uint32(blob[:4]))<<32 | uint64(uint32(pos)))
}

func (k key) prefix() uint32 { return uint32(k >> 32) }
func (k key) pos() int       { return int(uint32(k)) }

func prefixOf(blob *id.ID) uint32 { return binary.BigEndian.Uint32(blob[:4]) }

// mergeKeys merges two sorted key arrays into out, which has room for both.
func mergeKeys(out, a, b []key) {
	i, j, k := 0, 0, 0
	for i < len(a) && j < len(b) {
		if b[j] < a[i] {
			out[k] = b[j]
			j++
		} else {
			out[k] = a[i]
			i++
		}
		k++
	}
	k += copy(out[k:], a[i:])
	copy(out[k:], b[j:])
}

// sortRuns orders each run of keys sharing a prefix by whole id, then by
// position (the first copy added of a blob first: its canonical entry),
// and returns the number of distinct ids. The keys arrive sorted by prefix and
// position; runs are short (ids are uniformly random).
func (x *Index) sortRuns(keys []key) int {
	distinct := 0
	for i := 0; i < len(keys); {
		j := i + 1
		for j < len(keys) && keys[j].prefix() == keys[i].prefix() {
			j++
		}
		if j-i > 1 {
			run := keys[i:j]
			slices.SortFunc(run, func(a, b key) int {
				ea, eb := x.table.at(a.pos()), x.table.at(b.pos())
				if c := bytes.Compare(ea.id[:], eb.id[:]); c != 0 {
					return c
				}
				return a.pos() - b.pos()
			})
		}
		distinct++
		for k := i + 1; k < j; k++ {
			if x.table.at(keys[k].pos()).id != x.table.at(keys[k-1].pos()).id {
				distinct++
			}
		}
		i = j
	}
	return distinct
}

// fanoutBits: lookups start from the range of keys sharing the id's first
// 16 bits (a 256 KiB table).
const fanoutBits = 16

// buildFanout records, for every 16-bit prefix p, where the keys with a
// prefix below p end.
func buildFanout(keys []key) []uint32 {
	f := make([]uint32, 1<<fanoutBits+1)
	for _, k := range keys {
		f[k.prefix()>>(32-fanoutBits)+1]++
	}
	for i := 1; i < len(f); i++ {
		f[i] += f[i-1]
	}
	return f
}
