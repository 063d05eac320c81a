package prune

import (
	"bytes"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
)

// packInfo is one pack on the store with what prune does with it, made
// when asked for (plan keeps its packs in slices by number).
type packInfo struct {
	obj repo.ObjectEntry
	act action
	// n is the pack's number in the scratch index, -1 when no index file
	// lists it.
	n int
	// usedBytes and blobBytes are the bytes of its used blobs' canonical
	// copies, and of all the blobs its first listing names.
	usedBytes, blobBytes int64
}

// indexed reports whether an index file lists the pack.
func (pi packInfo) indexed() bool { return pi.n >= 0 }

// each calls fn with every pack on the store whose action is act, by id:
// the packs the scratch index numbers (in id order) merged with the
// unindexed ones (by id too).
func (p *plan) each(act action, fn func(packInfo)) {
	unindexed, u := p.stored.UnindexedCount(), 0
	emitUnindexed := func() {
		if p.unindexedAct[u] == act {
			fn(packInfo{obj: p.stored.Unindexed(u), act: act, n: -1})
		}
		u++
	}
	for n := range p.act {
		if !p.stored.OnStore(n) {
			continue // stale index entries, dropped from the merged index
		}
		if u < unindexed {
			pid := p.stored.ID(n)
			for u < unindexed && p.unindexedBefore(u, pid) {
				emitUnindexed()
			}
		}
		if p.act[n] == act {
			o, _ := p.stored.Entry(n) // on the store
			l, _ := p.scratch.Pack(n)
			fn(packInfo{obj: o, act: act, n: n, usedBytes: p.usedBytes[n], blobBytes: l.Bytes})
		}
	}
	for u < unindexed {
		emitUnindexed()
	}
}

// sorted returns the packs on the store whose action is act, by id.
func (p *plan) sorted(act action) []packInfo {
	var out []packInfo
	p.each(act, func(pi packInfo) { out = append(out, pi) })
	return out
}

// count is the number of packs on the store whose action is act.
func (p *plan) count(act action) int {
	n := 0
	p.each(act, func(packInfo) { n++ })
	return n
}

// stalePacks is the number of packs index files list that the store does
// not have.
func (p *plan) stalePacks() int {
	n := 0
	for i := range p.act {
		if !p.stored.OnStore(i) {
			n++
		}
	}
	return n
}

// keeps reports whether the merged index names pack number n: it is on
// the store and kept as it is.
func (p *plan) keeps(n int) bool { return p.stored.OnStore(n) && p.act[n] == actKeep }

// usedEntries returns the canonical copies of the used blobs of a pack to
// repack.
func (p *plan) usedEntries(pi packInfo) []pack.Entry { return p.repackUsed[pi.n] }

// unindexedBefore reports whether the u-th unindexed pack's id sorts
// before pid.
func (p *plan) unindexedBefore(u int, pid id.ID) bool {
	uid := p.stored.UnindexedID(u)
	return bytes.Compare(uid[:], pid[:]) < 0
}
