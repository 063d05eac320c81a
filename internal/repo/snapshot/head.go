package snapshot

import (
	"sort"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo/id"
)

// Head is what choosing a backup's parent needs of a snapshot: its id,
// time and group. A list of heads is a small fraction of the snapshots it
// stands for, so the metadata cache keeps one instead of every backup
// decoding every snapshot.
type Head struct {
	ID   id.ID     `json:"id"`
	Time time.Time `json:"time"`
	// Group is the snapshot's Group().
	Group string `json:"group"`
	// Volume tells whether the snapshot recorded a volume.
	Volume bool `json:"volume,omitempty"`
}

// HeadOf returns the head of s, stored under sid.
func HeadOf(sid id.ID, s *Snapshot) Head {
	return Head{ID: sid, Time: s.Time, Group: s.Group(), Volume: s.Volume != nil}
}

// Heads returns the heads of list, in its order.
func Heads(list []WithID) []Head {
	out := make([]Head, len(list))
	for i, s := range list {
		out[i] = HeadOf(s.ID, s.Snapshot)
	}
	return out
}

// SortHeads orders heads oldest first, ties by id: the order of SortByTime.
func SortHeads(list []Head) {
	sort.Slice(list, func(i, j int) bool {
		if !list[i].Time.Equal(list[j].Time) {
			return list[i].Time.Before(list[j].Time)
		}
		return string(list[i].ID[:]) < string(list[j].ID[:])
	})
}

// Latest returns the last head of list (oldest first) for which match
// returns true.
func Latest(list []Head, match func(Head) bool) (Head, bool) {
	for i := len(list) - 1; i >= 0; i-- {
		if match(list[i]) {
			return list[i], true
		}
	}
	return Head{}, false
}
