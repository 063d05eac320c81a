package repo

import (
	"bytes"
	"context"
	"slices"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/store"
)

// StoredPacks is the store's listing of the packs, read once beside a
// scratch index and kept by its pack numbers (ScratchIndex.NumberPacks):
// 16 bytes for each pack an index file lists, 48 for each it does not
// (its id too), and a key only for a pack stored under another than
// PackKey(id). A repository of 100 M blobs in packs of 16 has 6 M packs;
// a slice of their ObjectEntry values took ~150 bytes a pack, and check's
// and prune's maps of them as much again.
type StoredPacks struct {
	s *ScratchIndex
	// size and modTime are by pack number: size -1 when the store does
	// not have the pack, modTime in Unix nanoseconds, 0 when the store
	// gave no time (a pack written at the epoch is thus judged as one of
	// unknown age: young, never deleted for being old).
	size    []int64
	modTime []int64
	// keys holds the key of a pack listed under another than
	// PackKey(id) (moved by hand): rare, so not a string a pack.
	keys map[int]string
	// unindexed are the packs on the store no index file lists, by id,
	// and unindexedKeys the keys of those among them listed under another
	// than PackKey(id), by position: as few bytes a pack as the others,
	// for a repository that lost its index files has only such packs.
	unindexed     []unindexedPack
	unindexedKeys map[int]string
	stored        int
}

// unindexedPack is a pack on the store no index file lists.
type unindexedPack struct {
	id      id.ID
	size    int64
	modTime int64 // as StoredPacks.modTime
}

// ListPacks lists the packs on the store (DataPrefix), streamed, against
// the scratch index's pack numbers; bad are keys there that name no pack.
// Call it after the index files are added, before or after Finish.
func (s *ScratchIndex) ListPacks(ctx context.Context) (*StoredPacks, []string, error) {
	if err := s.NumberPacks(); err != nil {
		return nil, nil, err
	}
	sp := &StoredPacks{s: s}
	s.mu.Lock()
	var err error
	if sp.size, err = scratchTable[int64](s, s.PackCount()); err == nil {
		sp.modTime, err = scratchTable[int64](s, s.PackCount())
	}
	s.mu.Unlock()
	if err != nil {
		return nil, nil, err
	}
	for i := range sp.size {
		sp.size[i] = -1
	}
	var bad []string
	var misplaced []ObjectEntry // unindexed packs under a key of their own
	err = s.r.st.List(ctx, DataPrefix, func(oi store.ObjectInfo) error {
		pid, err := IDFromKey(oi.Key)
		if err != nil {
			bad = append(bad, oi.Key)
			return nil
		}
		sp.stored++
		num, ok := s.PackNumber(pid)
		if !ok {
			sp.unindexed = append(sp.unindexed, unindexedPack{id: pid, size: oi.Size, modTime: unixNano(oi.ModTime)})
			if oi.Key != PackKey(pid) {
				misplaced = append(misplaced, ObjectEntry{ID: pid, Key: oi.Key})
			}
			return nil
		}
		sp.size[num] = oi.Size
		sp.modTime[num] = unixNano(oi.ModTime)
		if oi.Key != PackKey(pid) {
			if sp.keys == nil {
				sp.keys = make(map[int]string)
			}
			sp.keys[num] = oi.Key
		}
		return nil
	})
	if err != nil {
		return nil, bad, err
	}
	slices.SortFunc(sp.unindexed, func(a, b unindexedPack) int { return bytes.Compare(a.id[:], b.id[:]) })
	for _, m := range misplaced {
		i, _ := slices.BinarySearchFunc(sp.unindexed, m.ID, func(u unindexedPack, t id.ID) int { return bytes.Compare(u.id[:], t[:]) })
		if sp.unindexedKeys == nil {
			sp.unindexedKeys = make(map[int]string)
		}
		sp.unindexedKeys[i] = m.Key
	}
	return sp, bad, nil
}

// unixNano is t in Unix nanoseconds, 0 for the zero time (unknown).
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// fromUnixNano is the inverse of unixNano.
func fromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// Stored is the number of packs on the store, indexed or not.
func (sp *StoredPacks) Stored() int { return sp.stored }

// OnStore reports whether the store has pack number n.
func (sp *StoredPacks) OnStore(n int) bool { return sp.size[n] >= 0 }

// Entry returns pack number n as the store listed it (ok false when the
// store does not have it).
func (sp *StoredPacks) Entry(n int) (ObjectEntry, bool) {
	if sp.size[n] < 0 {
		return ObjectEntry{}, false
	}
	l, _ := sp.s.Pack(n)
	e := ObjectEntry{ID: l.ID, Key: sp.keys[n], Size: sp.size[n], ModTime: sp.ModTime(n)}
	if e.Key == "" {
		e.Key = PackKey(l.ID)
	}
	return e, true
}

// Size is the stored size of pack number n (-1: not on the store).
func (sp *StoredPacks) Size(n int) int64 { return sp.size[n] }

// ModTime is the store's time of pack number n's write (zero: unknown
// or not on the store).
func (sp *StoredPacks) ModTime(n int) time.Time { return fromUnixNano(sp.modTime[n]) }

// UnindexedCount is the number of packs on the store that no index file
// lists.
func (sp *StoredPacks) UnindexedCount() int { return len(sp.unindexed) }

// Unindexed returns the i-th pack on the store that no index file lists,
// in the order of their ids, as the store listed it.
func (sp *StoredPacks) Unindexed(i int) ObjectEntry {
	u := sp.unindexed[i]
	key, ok := sp.unindexedKeys[i]
	if !ok {
		key = PackKey(u.id)
	}
	return ObjectEntry{ID: u.id, Key: key, Size: u.size, ModTime: fromUnixNano(u.modTime)}
}

// UnindexedID is the id of the i-th pack no index file lists.
func (sp *StoredPacks) UnindexedID(i int) id.ID { return sp.unindexed[i].id }

// ID is the id of pack number n.
func (sp *StoredPacks) ID(n int) id.ID {
	l, _ := sp.s.Pack(n)
	return l.ID
}
