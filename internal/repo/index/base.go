package index

import (
	"bytes"
	"errors"
	"os"
	"slices"

	"github.com/cloudstic/cloudstic/internal/repo/id"
)

// An Index may have an on-disk part (SetBase): the entries of the index
// files an on-disk index file covers, read with a pread per lookup, while
// the blobs of other index files and of a running backup are held in
// memory as before. A failure to read the on-disk part (an I/O error, a
// checksum) makes it answer "unknown" from then on and is kept for Err:
// a backup then stores such blobs again, which is safe, and a restore
// reports them missing. A damaged file is removed, so that the next run
// writes it anew.

// SetBase gives the index an on-disk part, whose blobs every lookup also
// consults. Call it before adding anything.
func (x *Index) SetBase(d *Disk) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.base = d
}

// Base returns the on-disk part, nil when there is none.
func (x *Index) Base() *Disk {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.base
}

// Err returns the first failure to read the on-disk part, or nil.
func (x *Index) Err() error {
	x.baseMu.Lock()
	defer x.baseMu.Unlock()
	return x.baseErr
}

// readBase runs a read of the on-disk part, remembering its first failure
// and ignoring the part after it. Callers hold x.mu, for reading at least,
// which guards x.base: without an on-disk part (every index below the
// size that needs one) the check costs no lock. baseErr is guarded by
// baseMu; baseFailed lets readers skip a failed part without it.
func (x *Index) readBase(fn func(d *Disk) error) bool {
	d := x.base
	if d == nil || x.baseFailed.Load() {
		return false
	}
	if err := fn(d); err != nil {
		x.baseMu.Lock()
		if x.baseErr == nil {
			x.baseErr = err
			x.baseFailed.Store(true)
			if errors.Is(err, ErrDiskCorrupt) {
				// The next run writes it anew from the index files
				// rather than meet the same damage.
				_ = os.Remove(d.Path()) // best effort: it is no longer read
			}
		}
		x.baseMu.Unlock()
		return false
	}
	return true
}

// baseHas reports whether the on-disk part holds blob.
func (x *Index) baseHas(blob *id.ID) bool {
	found := false
	x.readBase(func(d *Disk) error {
		_, ok, err := d.lookup(blob)
		found = ok
		return err
	})
	return found
}

// baseLookup returns blob's location in the on-disk part.
func (x *Index) baseLookup(blob *id.ID) (Location, bool) {
	var loc Location
	found := false
	x.readBase(func(d *Disk) error {
		e, ok, err := d.lookup(blob)
		if err != nil || !ok {
			return err
		}
		p, err := d.pack(e.pack)
		if err != nil {
			return err
		}
		loc, found = Location{Pack: p, Entry: e.packEntry()}, true
		return nil
	})
	return loc, found
}

// Packs returns the ids of every pack the index names, the on-disk
// part's first, then in the order they were added. With an on-disk part
// it reads that part's whole pack table.
func (x *Index) Packs() []id.ID {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.base == nil {
		return slices.Clone(x.packs)
	}
	var onDisk []id.ID
	x.readBase(func(d *Disk) error {
		return d.EachPack(func(p id.ID) error {
			onDisk = append(onDisk, p)
			return nil
		})
	})
	// A pack listed by two index files is in the table twice.
	slices.SortFunc(onDisk, compareIDs)
	onDisk = slices.Compact(onDisk)
	out := slices.Clip(onDisk)
	for _, p := range x.packs {
		if _, dup := slices.BinarySearchFunc(onDisk, p, compareIDs); !dup {
			out = append(out, p)
		}
	}
	return out
}

func compareIDs(a, b id.ID) int { return bytes.Compare(a[:], b[:]) }

// HasPack reports whether the index names a pack (with an on-disk part,
// by reading that part's pack table).
func (x *Index) HasPack(packID id.ID) bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if _, ok := x.packPos[packID]; ok {
		return true
	}
	errFound := errors.New("found")
	found := false
	x.readBase(func(d *Disk) error {
		err := d.EachPack(func(p id.ID) error {
			if p == packID {
				return errFound
			}
			return nil
		})
		if errors.Is(err, errFound) {
			found = true
			return nil
		}
		return err
	})
	return found
}

// Each calls fn for every blob's canonical location, in blob id order
// (merging the delta first), holding a read lock: the on-disk part's
// entries and those held in memory, a blob in both once.
func (x *Index) Each(fn func(blob id.ID, loc Location)) {
	x.Merge()
	x.mu.RLock()
	defer x.mu.RUnlock()
	var mem []int
	x.eachCanonical(func(pos int) { mem = append(mem, pos) })
	i := 0
	emitMem := func(upTo *id.ID) {
		for ; i < len(mem); i++ {
			loc := x.location(mem[i])
			if upTo != nil && bytes.Compare(loc.ID[:], upTo[:]) >= 0 {
				if loc.ID == *upTo {
					i++ // the on-disk copy stands for it
				}
				return
			}
			fn(loc.ID, loc)
		}
	}
	x.readBase(func(d *Disk) error {
		return d.eachRecord(func(e *entry) error {
			emitMem(&e.id)
			p, err := d.pack(e.pack)
			if err != nil {
				return err
			}
			fn(e.id, Location{Pack: p, Entry: e.packEntry()})
			return nil
		})
	})
	emitMem(nil)
}
