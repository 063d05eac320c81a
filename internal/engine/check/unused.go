package check

import (
	"fmt"

	"github.com/cloudstic/cloudstic/internal/engine/prune"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/index"
)

// unusedCount counts blobs no snapshot uses, and the packs holding them.
type unusedCount struct {
	blobs, bytes, packs int64
}

func (u *unusedCount) add(blobs, bytes int64) {
	u.blobs, u.bytes, u.packs = u.blobs+blobs, u.bytes+bytes, u.packs+1
}

// noteUnused notes the blobs of the indexed packs on the store that no
// snapshot uses (seen holds those used), split as prune splits them with
// the same threshold (Options.MaxUnused): a pack wholly unused is deleted
// and one with more than that share unused is repacked, so prune removes
// their unused blobs; the others stay where they are. Check must not say
// prune removes what prune deliberately keeps.
func (c *checker) noteUnused(x *index.Index, seen *index.Set, indexed []id.ID) {
	type use struct{ blobs, bytes int64 }
	used := map[id.ID]use{}
	seen.EachLocation(func(loc index.Location) {
		u := used[loc.Pack]
		u.blobs, u.bytes = u.blobs+1, u.bytes+int64(loc.Length)
		used[loc.Pack] = u
	})
	maxUnused := c.opts.MaxUnused
	if maxUnused == 0 {
		maxUnused = prune.DefaultMaxUnused
	}
	var removed, kept unusedCount
	for _, pid := range indexed {
		if _, ok := c.packs[pid]; !ok {
			continue // reported as missing
		}
		var blobs, bytes int64
		for _, e := range x.PackEntries(pid) {
			blobs, bytes = blobs+1, bytes+int64(e.Length)
		}
		u := used[pid]
		switch {
		case blobs == u.blobs:
		case u.blobs == 0 || float64(bytes-u.bytes) > maxUnused*float64(bytes):
			removed.add(blobs-u.blobs, bytes-u.bytes)
		default:
			kept.add(blobs-u.blobs, bytes-u.bytes)
		}
	}
	if removed.blobs == 0 && kept.blobs == 0 {
		return
	}
	pct := maxUnused * 100
	msg := fmt.Sprintf("%d blobs (%d bytes) are used by no snapshot (left by an interrupted backup or a forget)",
		removed.blobs+kept.blobs, removed.bytes+kept.bytes)
	if removed.blobs > 0 {
		msg += fmt.Sprintf("; prune removes %d of them (%d bytes), in %d packs wholly unused or more than %g%% unused (its repack threshold)",
			removed.blobs, removed.bytes, removed.packs, pct)
	}
	if kept.blobs > 0 {
		msg += fmt.Sprintf("; prune keeps %d of them (%d bytes), in %d packs at most %g%% unused, under its repack threshold (prune -max-unused with a lower share repacks them)",
			kept.blobs, kept.bytes, kept.packs, pct)
	}
	c.add(KindNote, repo.IndexPrefix, "%s", msg)
}
