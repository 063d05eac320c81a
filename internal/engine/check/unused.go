package check

import (
	"fmt"

	"github.com/cloudstic/cloudstic/internal/engine/prune"
	"github.com/cloudstic/cloudstic/internal/repo"
)

// unusedCount counts blobs no snapshot uses, and the packs holding them.
type unusedCount struct {
	blobs, bytes, packs int64
}

func (u *unusedCount) add(blobs, bytes int64) {
	u.blobs, u.bytes, u.packs = u.blobs+blobs, u.bytes+bytes, u.packs+1
}

// noteUnused notes the blobs of the indexed packs on the store that no
// snapshot uses (used counts those used, by pack number), split
// as prune splits them with the same threshold (Options.MaxUnused): a
// pack wholly unused is deleted and one with more than that share unused
// is repacked, so prune removes their unused blobs; the others stay where
// they are. Check must not say prune removes what prune deliberately
// keeps.
func (c *checker) noteUnused(used []packUse) {
	maxUnused := c.opts.MaxUnused
	if maxUnused == 0 {
		maxUnused = prune.DefaultMaxUnused
	}
	var removed, kept unusedCount
	for n, u := range used {
		if !c.stored.OnStore(n) {
			continue // reported as missing
		}
		l, _ := c.scratch.Pack(n)
		blobs, bytes := int64(l.Blobs), l.Bytes
		ublobs, ubytes := int64(u.blobs), int64(u.bytes)
		switch {
		case blobs == ublobs:
		case ublobs == 0 || float64(bytes-ubytes) > maxUnused*float64(bytes):
			removed.add(blobs-ublobs, bytes-ubytes)
		default:
			kept.add(blobs-ublobs, bytes-ubytes)
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
