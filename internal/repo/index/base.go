package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"

	"github.com/cloudstic/cloudstic/internal/repo/id"
)

// An Index may have an on-disk part (SetBase): the entries of the index
// files an on-disk index file covers, read with a pread per lookup, while
// the blobs of other index files and of a running backup are held in
// memory as before. The file is derived: a failure to read it (a damaged
// block: ErrDiskCorrupt, or an I/O error) never passes for a blob the
// repository lacks. Given a Rebuild (SetRebuildableBase), the first
// lookup to meet the failure rebuilds the part from the repository's
// index files, holding every other lookup until it is done, and each
// lookup that failed is retried once. Without one, or when the rebuild
// fails, the failure is kept for Err and Find and Contains return it for
// every blob the memory does not hold (Lookup and Has answer "unknown").
//
// The rebuild runs under the ctx of the lookup that started it, so that
// it stops when the command is interrupted (at 100 M blobs on a remote
// store it reads the index files for minutes). A rebuild stopped so is
// not a failure: the part is left to be rebuilt (broken), every lookup
// that reads it gets the failure again, and the next one whose ctx is
// live rebuilds it under that ctx. So a lookup that was waiting for a
// rebuild another lookup's ctx stopped either rebuilds it itself or, its
// own ctx ended too, returns that ctx's error; none reports a blob of the
// part absent. A lookup waits for a rebuild under way whatever its own
// ctx (the lookups of a command share its ctx, which an interruption
// ends for all). The Rebuild writes the new file under a temporary name
// and renames it only when it is complete: stopped, it leaves the
// damaged file or none, never a file a later run would trust.

// Rebuild replaces the damaged on-disk part of an index: it discards
// damaged, which could not be read, and returns a new part
// covering the same index files, or nil after giving every pack of those
// files to add, which puts them in memory (add may be called from several
// goroutines). It runs while the index is locked: it must not use it. It
// stops when ctx ends, returning an error, and may then be called again
// with the same damaged part (already closed, its file perhaps removed).
type Rebuild func(ctx context.Context, damaged *Disk, add func(PackBlobs)) (*Disk, error)

// SetBase gives the index an on-disk part, whose blobs every lookup also
// consults, and no Rebuild. Call it before adding anything.
func (x *Index) SetBase(d *Disk) { x.SetRebuildableBase(d, nil) }

// SetRebuildableBase is SetBase with rebuild to replace the part when it
// cannot be read (nil: none).
func (x *Index) SetRebuildableBase(d *Disk, rebuild Rebuild) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.base, x.rebuild, x.baseErr, x.broken = d, rebuild, nil, nil
}

// Base returns the on-disk part, nil when there is none.
func (x *Index) Base() *Disk {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.base
}

// Err returns the failure to read the on-disk part that could not be
// repaired, or nil.
func (x *Index) Err() error {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.baseErr
}

// readBase runs fn on the on-disk part, if any, and returns its error or
// the failure kept from before, or the one that left the part to be
// rebuilt (then without running it). Callers hold x.mu, for reading at
// least, which guards x.base, x.baseErr and x.broken.
func (x *Index) readBase(fn func(d *Disk) error) error {
	if x.baseErr != nil {
		return x.baseErr
	}
	if x.broken != nil {
		return x.broken
	}
	if x.base == nil {
		return nil
	}
	return fn(x.base)
}

// repairBase handles cause, a failure to read the on-disk part d: it
// rebuilds the part under ctx, unless another lookup did so already, and
// returns the failure kept for Err if it could not, or ctx's error if
// ctx ended first (the part is then left to be rebuilt: see Rebuild).
// Callers hold no lock.
func (x *Index) repairBase(ctx context.Context, d *Disk, cause error) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.base != d || x.baseErr != nil {
		return x.baseErr // another lookup repaired it, or failed to
	}
	if x.rebuild == nil {
		x.baseErr = cause
		if errors.Is(cause, ErrDiskCorrupt) {
			// The next run writes it anew from the index files rather
			// than meet the same damage.
			_ = os.Remove(d.Path()) // best effort: it is no longer read
		}
		return cause
	}
	if x.broken != nil {
		cause = x.broken // the first failure, which named the damage
	}
	if ctx.Err() != nil {
		return x.stopped(ctx, d, cause)
	}
	// No lookup reads d any more (x.mu is held, and readBase returns
	// x.broken): the part is rebuilt, or its blobs are added to memory
	// (Add's baseHas finds none in the part meanwhile).
	x.broken = cause
	var addMu sync.Mutex
	nd, err := x.rebuild(ctx, d, func(p PackBlobs) {
		addMu.Lock()
		defer addMu.Unlock()
		x.add(p.ID, p.Blobs)
	})
	if err != nil && ctx.Err() != nil {
		// Stopped, whatever the error it ended with (a store's request
		// cut short by ctx need not wrap its error).
		return x.stopped(ctx, d, cause)
	}
	x.broken = nil
	if err != nil {
		// cause names the file, as every error of Disk's reads does.
		x.base = nil
		x.baseErr = fmt.Errorf("%w; rebuilding this local on-disk index failed: %w", cause, err)
		return x.baseErr
	}
	x.base = nd
	return nil
}

// stopped leaves the on-disk part d, which cause could not read, to be
// rebuilt by the next lookup (see Rebuild), and returns ctx's error.
// Callers hold x.mu.
func (x *Index) stopped(ctx context.Context, d *Disk, cause error) error {
	x.broken = cause
	return fmt.Errorf("rebuilding the local on-disk index %s: %w", d.Path(), ctx.Err())
}

// baseHas reports whether the on-disk part holds blob. A failure to read
// it answers false: for Add, which only skips the delta for blobs the
// part holds.
func (x *Index) baseHas(blob *id.ID) bool {
	found := false
	_ = x.readBase(func(d *Disk) error { // see above
		_, ok, err := d.lookup(blob)
		found = ok
		return err
	})
	return found
}

// baseLookup returns blob's location in the on-disk part.
func (x *Index) baseLookup(blob *id.ID) (Location, bool, error) {
	var loc Location
	found := false
	err := x.readBase(func(d *Disk) error {
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
	return loc, found, err
}

// retry runs try under a read lock and, when it fails to read the
// on-disk part, repairs the part (repairBase) and runs it once more. try
// sets its results afresh on each run and returns the part's failure
// (readBase's). A repair runs under ctx.
func (x *Index) retry(ctx context.Context, try func() error) error {
	for retried := false; ; retried = true {
		x.mu.RLock()
		d, kept := x.base, x.baseErr
		err := try()
		x.mu.RUnlock()
		if err == nil || kept != nil || retried {
			return err
		}
		if err := x.repairBase(ctx, d, err); err != nil {
			return err
		}
	}
}

// Packs returns the ids of every pack the index names, the on-disk
// part's first, then in the order they were added. With an on-disk part
// it reads that part's whole pack table (repairing it as Find does,
// under ctx); when the part cannot be read, nor rebuilt, it returns
// Find's error and no packs: those held in memory are not all of them.
func (x *Index) Packs(ctx context.Context) ([]id.ID, error) {
	var out []id.ID
	err := x.retry(ctx, func() error {
		var onDisk []id.ID
		err := x.readBase(func(d *Disk) error {
			return d.EachPack(func(p id.ID) error {
				onDisk = append(onDisk, p)
				return nil
			})
		})
		if err != nil {
			return err
		}
		// A pack listed by two index files is in the table twice.
		slices.SortFunc(onDisk, compareIDs)
		onDisk = slices.Compact(onDisk)
		out = slices.Clip(onDisk)
		for _, p := range x.packs {
			if _, dup := slices.BinarySearchFunc(onDisk, p, compareIDs); !dup {
				out = append(out, p)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func compareIDs(a, b id.ID) int { return bytes.Compare(a[:], b[:]) }

// HasPack reports whether the index names a pack (with an on-disk part,
// by reading that part's pack table, repaired as Find does). Its error is
// Find's: it says nothing of whether the pack is named.
func (x *Index) HasPack(ctx context.Context, packID id.ID) (bool, error) {
	errFound := errors.New("found")
	found := false
	err := x.retry(ctx, func() error {
		if _, found = x.packPos[packID]; found {
			return nil
		}
		err := x.readBase(func(d *Disk) error {
			return d.EachPack(func(p id.ID) error {
				if p == packID {
					return errFound
				}
				return nil
			})
		})
		if found = errors.Is(err, errFound); found {
			return nil
		}
		return err
	})
	return found && err == nil, err
}

// Each calls fn for every blob's canonical location, in blob id order
// (merging the delta first), holding a read lock: the on-disk part's
// entries and those held in memory, a blob in both once. A failure to
// read the on-disk part (or one kept from before: see Err) ends the walk
// and is returned, wrapping ErrDiskCorrupt for a damaged file: fn has
// then seen only some of the blobs. There is no rebuild (fn has seen
// some of the part already); it is meant for tests and tools over small
// repositories.
func (x *Index) Each(fn func(blob id.ID, loc Location)) error {
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
	err := x.readBase(func(d *Disk) error {
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
	if err != nil {
		return err
	}
	emitMem(nil)
	return nil
}
