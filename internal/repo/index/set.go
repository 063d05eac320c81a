package index

import (
	"github.com/cloudstic/cloudstic/internal/repo/id"
)

// Set is a set of blob ids for walks over every snapshot (check's blobs
// seen, prune's blobs used): a bit per entry of the index for the blobs it
// knows, so ten million of them take 1.25 MB instead of a map's ~600 MB,
// and a map for the few it does not know. It reflects the index as it was
// when the set was made; blobs added later count as unknown. Not safe for
// concurrent use.
type Set struct {
	x       *Index
	n       int // entries of x when the set was made
	bits    []uint64
	known   int
	unknown map[id.ID]struct{}
}

// NewSet returns an empty set over x's blobs (merging x's delta first).
func (x *Index) NewSet() *Set {
	x.Merge()
	x.mu.RLock()
	defer x.mu.RUnlock()
	return &Set{x: x, n: x.table.n, bits: make([]uint64, (x.table.n+63)/64), unknown: make(map[id.ID]struct{})}
}

// pos returns the position of blob's canonical entry, if x knew it when
// the set was made.
func (s *Set) pos(blob *id.ID) (int, bool) {
	s.x.mu.RLock()
	defer s.x.mu.RUnlock()
	i, ok := s.x.search(blob)
	if !ok {
		return 0, false
	}
	pos := s.x.sorted[i].pos()
	return pos, pos < s.n
}

// Add adds blob and reports whether it was not in the set yet.
func (s *Set) Add(blob id.ID) bool {
	if pos, ok := s.pos(&blob); ok {
		w, bit := pos/64, uint64(1)<<(pos%64)
		if s.bits[w]&bit != 0 {
			return false
		}
		s.bits[w] |= bit
		s.known++
		return true
	}
	if _, ok := s.unknown[blob]; ok {
		return false
	}
	s.unknown[blob] = struct{}{}
	return true
}

// Has reports whether blob is in the set.
func (s *Set) Has(blob id.ID) bool {
	if pos, ok := s.pos(&blob); ok {
		return s.bits[pos/64]&(uint64(1)<<(pos%64)) != 0
	}
	_, ok := s.unknown[blob]
	return ok
}

// Len is the number of blobs in the set.
func (s *Set) Len() int { return s.known + len(s.unknown) }

// Unknown returns the blobs of the set the index did not know.
func (s *Set) Unknown() []id.ID {
	out := make([]id.ID, 0, len(s.unknown))
	for b := range s.unknown {
		out = append(out, b)
	}
	return out
}

// EachLocation calls fn with the canonical location of every blob of the
// set the index knows, in id order.
func (s *Set) EachLocation(fn func(Location)) {
	s.x.mu.RLock()
	defer s.x.mu.RUnlock()
	s.x.eachCanonical(func(pos int) {
		if pos < s.n && s.bits[pos/64]&(uint64(1)<<(pos%64)) != 0 {
			fn(s.x.location(pos))
		}
	})
}

// Absent is the number of blobs the index knew when the set was made that
// are not in the set.
func (s *Set) Absent() int {
	s.x.mu.RLock()
	defer s.x.mu.RUnlock()
	n := 0
	s.x.eachCanonical(func(pos int) {
		if pos < s.n && s.bits[pos/64]&(uint64(1)<<(pos%64)) == 0 {
			n++
		}
	})
	return n
}
