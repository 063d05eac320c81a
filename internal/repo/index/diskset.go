package index

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"runtime"
	"sort"

	"golang.org/x/sync/errgroup"

	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
)

// Record is a blob's canonical entry in an on-disk index: its position
// among the file's records (0 to Len-1, in blob id order), the position
// of its pack in the pack table (PackAt) and its place in that pack.
type Record struct {
	Pos   int
	Pack  uint32
	Entry pack.Entry
}

// Find returns blob's record, if the file holds it. An error means the
// file could not be read or is damaged (ErrDiskCorrupt). Safe for
// concurrent use.
func (d *Disk) Find(blob id.ID) (Record, bool, error) {
	if d.l.entries == 0 {
		return Record{}, false, nil
	}
	p := binary.BigEndian.Uint64(blob[:8])
	last := sort.Search(int(d.l.recordBlocks), func(i int) bool { return d.first(i) > p }) - 1
	if last < 0 {
		return Record{}, false, nil
	}
	first := last
	for first > 0 && d.first(first) == p {
		first--
	}
	b := d.blocks.Get().(*[blockSize]byte)
	defer d.blocks.Put(b)
	for i := first; i <= last; i++ {
		recs, n, err := d.readBlock(b, blockSize, uint64(i), d.l.entries, recordsPerBlock, diskRecord)
		if err != nil {
			return Record{}, false, err
		}
		if binary.BigEndian.Uint64(recs) != d.first(i) {
			// A sealed block of this file, but not this one (the
			// seal does not bind a block's place): its records would
			// answer "not found" for the blobs of the right one.
			return Record{}, false, fmt.Errorf("%s: %w: record block %d does not start with the id its first ids name", d.path, ErrDiskCorrupt, i)
		}
		j := sort.Search(n, func(j int) bool { return bytes.Compare(recs[j*diskRecord:j*diskRecord+32], blob[:]) >= 0 })
		if j < n && bytes.Equal(recs[j*diskRecord:j*diskRecord+32], blob[:]) {
			e := decodeRecord(recs[j*diskRecord:])
			return Record{Pos: i*recordsPerBlock + j, Pack: e.pack, Entry: e.packEntry()}, true, nil
		}
	}
	return Record{}, false, nil
}

// PackAt returns the id at position p of the pack table.
func (d *Disk) PackAt(p uint32) (id.ID, error) { return d.pack(p) }

// DiskSet is a set of blob ids over an on-disk index, for walks over
// every snapshot of a repository too large to hold its index in memory
// (check): a bit per record of the file, 12.5 MB at 100 M blobs, and a
// map for the few blobs the file does not hold. Not safe for concurrent
// use.
type DiskSet struct {
	d       *Disk
	bits    []uint64
	known   int
	unknown map[id.ID]struct{}
}

// NewSet returns an empty set over d's blobs.
func (d *Disk) NewSet() *DiskSet {
	return &DiskSet{d: d, bits: make([]uint64, (d.Len()+63)/64), unknown: make(map[id.ID]struct{})}
}

// Add adds blob. It reports whether blob was not in the set yet and, when
// the file holds blob, its record (found). Each call reads the file once.
func (s *DiskSet) Add(blob id.ID) (added bool, rec Record, found bool, err error) {
	rec, found, err = s.d.Find(blob)
	if err != nil {
		return false, Record{}, false, err
	}
	return s.Mark(blob, rec, found), rec, found, nil
}

// Mark adds blob, whose record (found: whether the file holds it) the
// caller looked up with Find, and reports whether it was not in the set
// yet. Lookups, the costly part, may so run in parallel.
func (s *DiskSet) Mark(blob id.ID, rec Record, found bool) bool {
	if !found {
		if _, ok := s.unknown[blob]; ok {
			return false
		}
		s.unknown[blob] = struct{}{}
		return true
	}
	w, bit := rec.Pos/64, uint64(1)<<(rec.Pos%64)
	if s.bits[w]&bit != 0 {
		return false
	}
	s.bits[w] |= bit
	s.known++
	return true
}

// Has reports whether blob is in the set.
func (s *DiskSet) Has(blob id.ID) (bool, error) {
	rec, found, err := s.d.Find(blob)
	if err != nil || !found {
		_, ok := s.unknown[blob]
		return ok && err == nil, err
	}
	return s.bits[rec.Pos/64]&(uint64(1)<<(rec.Pos%64)) != 0, nil
}

// Len is the number of blobs in the set.
func (s *DiskSet) Len() int { return s.known + len(s.unknown) }

// Each calls fn with the record of every blob of the set the file holds,
// in id order, reading the file once from start to end; fn's error stops
// it.
func (s *DiskSet) Each(fn func(Record) error) error {
	pos := 0
	return s.d.eachRecord(func(e *entry) error {
		i := pos
		pos++
		if s.bits[i/64]&(uint64(1)<<(i%64)) == 0 {
			return nil
		}
		return fn(Record{Pos: i, Pack: e.pack, Entry: e.packEntry()})
	})
}

// Found is the answer to one lookup of FindAll.
type Found struct {
	Record
	// OK says whether the file holds the blob (Record is valid).
	OK bool
}

// minLookups is the fewest lookups FindAll gives a goroutine of their own.
const minLookups = 256

// FindAll looks blobs up, on every core for many: a walk over every
// snapshot (check's, prune's) spends most of its time in lookups, a pread
// and the opening of a sealed block each.
func (d *Disk) FindAll(blobs []id.ID) ([]Found, error) {
	out := make([]Found, len(blobs))
	parts := max(1, min(runtime.GOMAXPROCS(0), (len(blobs)+minLookups-1)/minLookups))
	per := (len(blobs) + parts - 1) / parts
	var g errgroup.Group
	for lo := 0; lo < len(blobs); lo += per {
		hi := min(lo+per, len(blobs))
		g.Go(func() error {
			for i := lo; i < hi; i++ {
				rec, ok, err := d.Find(blobs[i])
				if err != nil {
					return err
				}
				out[i] = Found{Record: rec, OK: ok}
			}
			return nil
		})
	}
	return out, g.Wait()
}

// Unsealed is the Sealer of an on-disk index that lives only as long as
// the process that writes it (repo.ScratchIndex): its blocks are in the
// clear under their CRC, as the sorted runs it is written from are, which
// spares every lookup the opening of a sealed block (a fifth of a check's
// time at 10 M blobs).
type Unsealed struct{}

// Seal appends plain to dst.
func (Unsealed) Seal(dst, plain []byte) ([]byte, error) { return append(dst, plain...), nil }

// OpenInPlace returns sealed.
func (Unsealed) OpenInPlace(sealed []byte) ([]byte, error) { return sealed, nil }

// SealedSize is n.
func (Unsealed) SealedSize(n int) int { return n }
