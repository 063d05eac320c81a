//go:build !windows

package mount

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
)

// timeFormat names snapshot directories, as restic does.
const timeFormat = "2006-01-02T15:04:05Z07:00"

// named is a snapshot with its directory name under snapshots/.
type named struct {
	name string
	snapshot.WithID
}

// snapList is the repository's snapshot list, re-read when older than
// its refresh interval.
type snapList struct {
	r       *repo.Repository
	clock   clock.Clock
	every   time.Duration
	warnf   func(string, ...any)
	mu      sync.Mutex
	loaded  time.Time
	list    []named // oldest first
	indexed map[string]bool
}

// get returns the current list, oldest first.
func (l *snapList) get(ctx context.Context) ([]named, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock.Now()
	if l.list != nil && now.Sub(l.loaded) < l.every {
		return l.list, nil
	}
	list, err := l.load(ctx)
	if err != nil {
		if l.list != nil {
			// Keep serving what we have; the next access tries again.
			l.warnf("re-reading the snapshot list: %v", err)
			return l.list, nil
		}
		return nil, err
	}
	l.list, l.loaded = list, now
	return list, nil
}

func (l *snapList) load(ctx context.Context) ([]named, error) {
	// Damaged snapshots are left out (the repository's damage watcher
	// reports them).
	snaps, _, err := l.r.Snapshots(ctx)
	if err != nil {
		return nil, err
	}
	fresh := false
	for _, s := range snaps {
		if !l.indexed[s.ID.String()] {
			fresh = true
		}
	}
	if fresh {
		// New snapshots come with new packs: read the index files again.
		if _, err := l.r.LoadIndex(ctx); err != nil {
			return nil, err
		}
		for _, s := range snaps {
			l.indexed[s.ID.String()] = true
		}
	}
	return nameSnapshots(snaps), nil
}

// nameSnapshots names each snapshot by its time in local time; snapshots
// of the same second get "-1", "-2"... in id order.
func nameSnapshots(snaps []snapshot.WithID) []named {
	out := make([]named, 0, len(snaps))
	used := map[string]int{}
	for _, s := range snaps {
		name := s.Time.Local().Format(timeFormat)
		if n := used[name]; n > 0 {
			used[name]++
			name = fmt.Sprintf("%s-%d", name, n)
		} else {
			used[name] = 1
		}
		out = append(out, named{name: name, WithID: s})
	}
	return out
}
