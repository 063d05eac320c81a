package repo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/index"
)

// The on-disk index (index.Disk) keeps a backup's memory flat in the size
// of the repository: LoadIndex writes the entries of every index file,
// sorted, into a file in the index directory, once, and then reads only
// the index files added since (a backup's own, other hosts') into memory
// beside it. When those grow past a sixteenth of the file, or past
// DiskIndex.Delta bytes, they are merged into a new file. A file covering
// an index file the repository no longer has (prune replaced it) is never
// used: its packs may be gone. The directory is this host's, derived from
// the repository, and safe to delete.

// DefaultDiskIndexMin is the size of the stored index files from which
// LoadIndex keeps the index on disk (SetDiskIndex): about 350,000 blobs,
// ~20 MB of index in memory. Below it the index is read into memory, which
// costs less than writing the file.
const DefaultDiskIndexMin = 16 << 20

// DefaultDiskIndexDelta is how many bytes of index files not covered by
// the on-disk index LoadIndex reads into memory beside it, at least,
// rather than writing a new file.
const DefaultDiskIndexDelta = 32 << 20

// staleTemp is the age from which a build's leftover temporary files (its
// process died) are removed.
const staleTemp = 24 * time.Hour

// errIndexDir wraps failures of the index directory (as opposed to the
// store's): LoadIndex then falls back to memory.
var errIndexDir = errors.New("on-disk index directory")

// DiskIndex says where and from what size LoadIndex keeps the index on
// disk (see index.Disk).
type DiskIndex struct {
	// Dir holds the files; "" keeps the index in memory. It is created
	// when needed.
	Dir string
	// Min is the size of the stored index files from which the index is
	// kept on disk: 0 means DefaultDiskIndexMin, a negative size always.
	Min int64
	// Delta is how many bytes of index files the file does not cover
	// are read into memory beside it, rather than merged into a new file,
	// at least (0: DefaultDiskIndexDelta); a sixteenth of the file's size
	// when that is more.
	Delta int64
	// Clock ages a dead build's temporary files (default clock.Real).
	Clock clock.Clock
}

// SetDiskIndex makes LoadIndex keep the index on disk as o says.
func (r *Repository) SetDiskIndex(o DiskIndex) {
	if o.Min == 0 {
		o.Min = DefaultDiskIndexMin
	}
	if o.Delta <= 0 {
		o.Delta = DefaultDiskIndexDelta
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	r.diskIndex = o
}

// wantsDiskIndex reports whether LoadIndex should keep the index files
// objs on disk.
func (r *Repository) wantsDiskIndex(objs []ObjectEntry) bool {
	if r.diskIndex.Dir == "" || len(objs) == 0 {
		return false // nothing to keep: no file covering no index file
	}
	if r.idx.Base() != nil {
		return true // a reload (mount): keep the file already used
	}
	var total int64
	for _, o := range objs {
		total += o.Size
	}
	return total >= r.diskIndex.Min
}

// loadIndexOnDisk is LoadIndex of the index files objs with an on-disk
// index. Failures of the directory are wrapped in errIndexDir; nothing
// has been added to the index when it returns one.
func (r *Repository) loadIndexOnDisk(ctx context.Context, objs []ObjectEntry) ([]Damaged, error) {
	base := r.idx.Base()
	reload := base != nil
	if !reload {
		current := make(map[id.ID]bool, len(objs))
		for _, o := range objs {
			current[o.ID] = true
		}
		var err error
		if base, err = r.pickDiskIndex(current); err != nil {
			return nil, err
		}
	}
	covered := make(map[id.ID]bool)
	if base != nil {
		for _, f := range base.Files() {
			covered[f] = true
		}
	}
	var missing []id.ID
	var missingBytes int64
	for _, o := range objs {
		if !covered[o.ID] {
			missing = append(missing, o.ID)
			missingBytes += o.Size
		}
	}
	if base != nil && (reload || missingBytes <= max(r.diskIndex.Delta, base.Size()/16)) {
		if !reload {
			r.idx.SetRebuildableBase(base, r.rebuildDiskIndex())
		}
		return r.readIndexFiles(ctx, missing, 8, r.addToIndex, func(id.ID) {})
	}
	return r.buildDiskIndex(ctx, base, missing)
}

// buildDiskIndex writes a new on-disk index of base and the index files
// missing from it, and makes it the index's on-disk part.
func (r *Repository) buildDiskIndex(ctx context.Context, base *index.Disk, missing []id.ID) ([]Damaged, error) {
	d, damaged, err := r.writeDiskIndex(ctx, base, missing)
	if err != nil {
		return nil, err
	}
	if base != nil && base.Path() != d.Path() {
		// Superseded. Another process may still read it: where the
		// system refuses to remove an open file it stays until a later
		// run (pickDiskIndex) removes it.
		dropDisk(base)
	}
	r.idx.SetRebuildableBase(d, r.rebuildDiskIndex())
	if r.cache != nil && len(damaged) == 0 {
		r.retainCachedPacks(d)
	}
	// Writing the file left tens of MB of decoded index files as
	// garbage, which the runtime would return to the system only slowly,
	// under the backup that follows: give it back now (once per file
	// written, a few milliseconds), so that the run's peak is the
	// backup's, not both.
	debug.FreeOSMemory()
	return damaged, nil
}

// writeDiskIndex writes and opens an on-disk index of base (nil: none)
// and the index files missing from it. Failures of the directory are
// wrapped in errIndexDir.
func (r *Repository) writeDiskIndex(ctx context.Context, base *index.Disk, missing []id.ID) (*index.Disk, []Damaged, error) {
	b, err := index.NewDiskBuilder(r.diskIndex.Dir, r.key)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", errIndexDir, err)
	}
	defer b.Close()
	// One file at a time from a local disk, two from a remote store
	// (where a download waits for the network): each one in flight holds
	// its sealed and its plain bytes (~30 MB for an index file of 400,000
	// blobs), and this path exists to keep memory down.
	inFlight := 1
	if r.reqCost > 64<<10 {
		inFlight = 2
	}
	damaged, err := r.readIndexFiles(ctx, missing, inFlight, func(p index.PackBlobs) error {
		if err := b.AddPack(p); err != nil {
			return fmt.Errorf("%w: %w", errIndexDir, err)
		}
		return nil
	}, func(fid id.ID) {
		b.Covers(fid)
		// Each file decoded leaves its sealed and plain bytes (~30 MB
		// for 400,000 blobs) as garbage while the live heap stays
		// small: collected now, their memory holds the next file's, and
		// the heap does not grow to twice its size first (at 100 M blobs
		// the peak was ~40 MB above the backup's own). A collection of
		// a small heap costs little beside decoding a file.
		runtime.GC()
	})
	if err != nil {
		return nil, nil, err
	}
	path, err := b.Finish(base)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", errIndexDir, err)
	}
	d, err := index.OpenDisk(path, r.key)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", errIndexDir, err)
	}
	return d, damaged, nil
}

// retainCachedPacks drops cached packs that a new on-disk index does
// not name, reading its pack table once (cached packs are tree packs:
// few). Done only when a file is written, which follows every prune.
func (r *Repository) retainCachedPacks(d *index.Disk) {
	named := make(map[string]bool)
	// First collect the cached keys, keeping them all.
	_ = r.cache.Retain(DataPrefix, func(k string) bool { named[k] = false; return true }) // best effort, as in retainCached
	if len(named) == 0 {
		return
	}
	err := d.EachPack(func(p id.ID) error {
		if _, ok := named[PackKey(p)]; ok {
			named[PackKey(p)] = true
		}
		return nil
	})
	if err == nil { // else keep everything: stale copies are never read
		_ = r.cache.Retain(DataPrefix, func(k string) bool { return named[k] }) // as above
	}
}

// pickDiskIndex opens the largest on-disk index in dir covering only
// index files in current (nil if none), and removes the others: damaged
// ones, ones covering index files the repository no longer has, smaller
// ones, and old temporary files.
func (r *Repository) pickDiskIndex(current map[id.ID]bool) (*index.Disk, error) {
	dir := r.diskIndex.Dir
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("%w: %w", errIndexDir, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errIndexDir, err)
	}
	var best *index.Disk
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if strings.HasPrefix(e.Name(), "tmp-") {
			if info, err := e.Info(); err == nil && r.diskIndex.Clock.Now().Sub(info.ModTime()) > staleTemp {
				// Litter of a build that died, or a directory of a
				// check's scratch index; best effort.
				_ = os.RemoveAll(p)
			}
			continue
		}
		if !strings.HasSuffix(e.Name(), index.DiskSuffix) {
			continue
		}
		d, err := index.OpenDisk(p, r.key)
		if err != nil {
			if errors.Is(err, index.ErrDiskCorrupt) {
				_ = os.Remove(p) // rebuilt from the store's index files; best effort
			}
			continue
		}
		usable := true
		for _, f := range d.Files() {
			if !current[f] {
				usable = false
				break
			}
		}
		switch {
		case !usable: // stale since a prune
			dropDisk(d)
		case best == nil || d.Len() > best.Len():
			if best != nil {
				dropDisk(best)
			}
			best = d
		default:
			dropDisk(d)
		}
	}
	return best, nil
}

// dropDisk closes and removes an on-disk index that is stale or
// superseded. Best effort: on Windows a file another process holds open
// cannot be removed, and a later run (pickDiskIndex) tries again.
func dropDisk(d *index.Disk) {
	_ = d.Close()           // read-only
	_ = os.Remove(d.Path()) // best effort, see above
}
