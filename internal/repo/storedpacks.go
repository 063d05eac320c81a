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
// 16 bytes for each pack an index file lists, and the whole entry only
// for the packs none lists. A repository of 100 M blobs in packs of 16
// has 6 M packs; a slice of their ObjectEntry values took ~150 bytes a
// pack, and check's and prune's maps of them as much again.
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
	// unindexed are the packs on the store no index file lists, by id.
	unindexed []ObjectEntry
	stored    int
}

// ListPacks lists the packs on the store (DataPrefix), streamed, against
// the scratch index's pack numbers; bad are keys there that name no pack.
// Call it after the index files are added, before or after Finish.
func (s *ScratchIndex) ListPacks(ctx context.Context) (*StoredPacks, []string, error) {
	s.NumberPacks()
	n := s.PackCount()
	sp := &StoredPacks{s: s, size: make([]int64, n), modTime: make([]int64, n)}
	for i := range sp.size {
		sp.size[i] = -1
	}
	var bad []string
	err := s.r.st.List(ctx, DataPrefix, func(oi store.ObjectInfo) error {
		pid, err := IDFromKey(oi.Key)
		if err != nil {
			bad = append(bad, oi.Key)
			return nil
		}
		sp.stored++
		num, ok := s.PackNumber(pid)
		if !ok {
			sp.unindexed = append(sp.unindexed, ObjectEntry{ID: pid, Key: oi.Key, Size: oi.Size, ModTime: oi.ModTime})
			return nil
		}
		sp.size[num] = oi.Size
		if !oi.ModTime.IsZero() {
			sp.modTime[num] = oi.ModTime.UnixNano()
		}
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
	slices.SortFunc(sp.unindexed, func(a, b ObjectEntry) int { return bytes.Compare(a.ID[:], b.ID[:]) })
	return sp, bad, nil
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
func (sp *StoredPacks) ModTime(n int) time.Time {
	if sp.modTime[n] == 0 {
		return time.Time{}
	}
	return time.Unix(0, sp.modTime[n]).UTC()
}

// Unindexed returns the packs on the store that no index file lists, by
// id. The slice is the table's own: do not change it.
func (sp *StoredPacks) Unindexed() []ObjectEntry { return sp.unindexed }

// ID is the id of pack number n.
func (sp *StoredPacks) ID(n int) id.ID {
	l, _ := sp.s.Pack(n)
	return l.ID
}
