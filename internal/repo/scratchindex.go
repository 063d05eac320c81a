package repo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/index"
	"github.com/cloudstic/cloudstic/internal/repo/offheap"
)

// ScratchIndex is an on-disk index a command builds for itself from the
// index files it reads, and removes when done: check and prune, which
// must read every index file themselves (to report each one's damage, or
// to refuse to delete anything past it), and which at 100 M blobs could
// not hold them in memory (~7 GB). Lookups read the sorted file
// (index.Disk) with a pread; in memory it keeps a few dozen bytes per
// pack: each pack listing's place (Listing), and the packs listed. The
// blobs of a pack, which few need, are read from the index files a second
// time (EachPack). Repair index, which looks no blob up, keeps only the
// pack listings (NewPackListings): no file at all.
//
// It is written where the on-disk index is kept (SetDiskIndex), in a
// directory of its own that only the user reads, or under the system's
// temporary directory when there is none. Unlike the on-disk index kept
// between runs, its blocks are not sealed with the repository's key
// (index.Unsealed): like the sorted runs it is written from, it exists
// only while the command runs, and opening a sealed block was a fifth of
// every lookup's cost. A directory a dead process left is removed a day
// later by the next run that keeps its index on disk, or, under the
// system's temporary directory, by the next scratch index made there.
type ScratchIndex struct {
	r    *Repository
	dir  string
	b    *index.DiskBuilder // nil: pack listings only (NewPackListings)
	disk *index.Disk

	mu    sync.Mutex // guards what AddFile appends
	files []scratchFile
	// listings, packs and packOf are tables outside the Go heap
	// (offheap): tens of bytes for each of millions of packs, which on
	// the heap would count twice towards the peak (the collector's
	// headroom). After NumberPacks, packs holds the position of each
	// pack's first listing, sorted by pack id: the index in packs is the
	// pack's number (4 bytes a pack, not a copy of its id). packOf gives
	// the number of the pack of each listing.
	listings offheap.Vector[PackListing]
	packs    []uint32
	packOf   []uint32
	// frees release the tables made for this index and its StoredPacks.
	frees    []func()
	numbered bool
}

// scratchFile is an index file added, in the order added.
type scratchFile struct {
	id    id.ID
	packs int
}

// scratchPreload is the size up to which a scratch index is read into
// memory once written (about 1.3 M blobs): below it the preads of its
// lookups cost more than holding it, and less memory than the in-memory
// index held before (~82 bytes a blob).
const scratchPreload = 64 << 20

// PackListing is one index file's listing of a pack: the pack, how many
// blobs it lists and their sealed bytes.
type PackListing struct {
	ID    id.ID
	Blobs int
	Bytes int64
}

// Prefixes of a scratch index's directory: under the on-disk index's
// directory, where pickDiskIndex removes old "tmp-" entries, and under the
// system's temporary directory, shared with other programs, where the
// name says whose it is.
const (
	scratchPrefix       = "tmp-scratch-"
	systemScratchPrefix = "cloudstic-scratch-"
)

// NewScratchIndex starts a scratch index. Close it in every case.
func (r *Repository) NewScratchIndex() (*ScratchIndex, error) {
	parent, prefix := r.diskIndex.Dir, scratchPrefix
	if parent != "" {
		if err := os.MkdirAll(parent, 0o700); err != nil {
			parent = "" // the system's temporary directory serves as well
		}
	}
	if parent == "" {
		parent, prefix = os.TempDir(), systemScratchPrefix
		r.removeStaleScratch(parent)
	}
	dir, err := os.MkdirTemp(parent, prefix)
	if err != nil {
		return nil, fmt.Errorf("scratch index: %w", err)
	}
	b, err := index.NewDiskBuilder(dir, index.Unsealed{})
	if err != nil {
		_ = os.RemoveAll(dir) // empty but for what failed; best effort
		return nil, fmt.Errorf("scratch index: %w", err)
	}
	b.NoSync()
	return &ScratchIndex{r: r, dir: dir, b: b}, nil
}

// NewPackListings starts a scratch index that keeps only the pack
// listings (Listing, the pack numbers, EachPack and ListPacks), for a
// command that reads the blobs of each pack from the index files again
// and never looks a blob up: repair index. It writes nothing to disk, so
// nothing can fail; Finish returns ErrListingsOnly. Close it all the same.
func (r *Repository) NewPackListings() *ScratchIndex {
	return &ScratchIndex{r: r}
}

// ErrListingsOnly means Finish was called on a scratch index that keeps
// only the pack listings (NewPackListings): it has no blob index to
// write.
var ErrListingsOnly = errors.New("scratch index: it keeps only the pack listings, it has no blob index to finish")

// removeStaleScratch removes what killed commands left under the system's
// temporary directory: a scratch index of ours older than a day (no
// command runs that long; on-disk index directories are swept by
// pickDiskIndex instead). Best effort: another user's directory, say,
// cannot be removed, and nothing depends on it.
func (r *Repository) removeStaleScratch(tmp string) {
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return // nothing to sweep that we can see
	}
	c := r.diskIndex.Clock
	if c == nil { // SetDiskIndex never called: no index kept on disk
		c = clock.Real{}
	}
	now := c.Now()
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), systemScratchPrefix) {
			continue
		}
		if info, err := e.Info(); err == nil && now.Sub(info.ModTime()) > staleTemp {
			_ = os.RemoveAll(filepath.Join(tmp, e.Name())) // best effort, as above
		}
	}
}

// AddFile adds the packs of the index file fid, each at the next position
// of the pack table (the first pack added is at 0). Safe for concurrent
// use: the order of the calls is the order of the positions.
func (s *ScratchIndex) AddFile(fid id.ID, f *index.File) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range f.Packs {
		l := PackListing{ID: p.ID, Blobs: len(p.Blobs)}
		for _, e := range p.Blobs {
			l.Bytes += int64(e.Length)
		}
		if s.b != nil {
			if err := s.b.AddPack(p); err != nil {
				return fmt.Errorf("scratch index: %w", err)
			}
		}
		if err := s.listings.Append(l); err != nil {
			return fmt.Errorf("scratch index: %w", err)
		}
	}
	s.files = append(s.files, scratchFile{id: fid, packs: len(f.Packs)})
	return nil
}

// Listings is the number of pack listings added (a pack listed by two
// index files counts twice).
func (s *ScratchIndex) Listings() int { return s.listings.Len() }

// Listing returns the pack listing at position pos (an index.Record's
// Pack).
func (s *ScratchIndex) Listing(pos uint32) PackListing { return s.listings.At(int(pos)) }

// NumberPacks numbers the packs listed, each once, from 0 in the order of
// their ids. Call it once every index file is added; Finish does when it
// was not.
func (s *ScratchIndex) NumberPacks() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.numberPacks()
}

func (s *ScratchIndex) numberPacks() error {
	if s.numbered {
		return nil
	}
	n := s.listings.Len()
	packs, err := scratchTable[uint32](s, n)
	if err != nil {
		return err
	}
	packOf, err := scratchTable[uint32](s, n)
	if err != nil {
		return err
	}
	for i := range packs {
		packs[i] = uint32(i)
	}
	// Stable: of a pack's listings, the first comes first and stays.
	slices.SortStableFunc(packs, func(a, b uint32) int {
		ia, ib := s.listings.At(int(a)).ID, s.listings.At(int(b)).ID
		return bytes.Compare(ia[:], ib[:])
	})
	last := -1 // compacted in place: last never passes the element read
	var lastID id.ID
	for _, pos := range packs {
		if pid := s.listings.At(int(pos)).ID; last < 0 || pid != lastID {
			last++
			packs[last], lastID = pos, pid
		}
		packOf[pos] = uint32(last)
	}
	s.packs, s.packOf, s.numbered = packs[:last+1], packOf, true
	return nil
}

// scratchTable makes a zeroed table of n values outside the Go heap,
// released by s's Close. Callers hold s.mu.
func scratchTable[T any](s *ScratchIndex, n int) ([]T, error) {
	t, free, err := offheap.MakeTable[T](n)
	if err != nil {
		return nil, fmt.Errorf("scratch index: %w", err)
	}
	s.frees = append(s.frees, free)
	return t, nil
}

// Finish writes the index and opens it (ErrListingsOnly for a scratch
// index of NewPackListings). Of a blob's copies in several
// packs, its record names the one in the pack that sorts first by less
// (given pack table positions), the first added of equals.
func (s *ScratchIndex) Finish(less func(a, b uint32) bool) (*index.Disk, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.b == nil {
		return nil, ErrListingsOnly
	}
	if err := s.numberPacks(); err != nil {
		return nil, err
	}
	s.b.Prefer(less)
	path, err := s.b.Finish(nil)
	if err != nil {
		return nil, fmt.Errorf("scratch index: %w", err)
	}
	s.b.Close()
	if s.disk, err = index.OpenDisk(path, index.Unsealed{}); err != nil {
		return nil, fmt.Errorf("scratch index: %w", err)
	}
	if s.disk.Size() <= scratchPreload {
		if err := s.disk.Preload(); err != nil {
			return nil, fmt.Errorf("scratch index: %w", err)
		}
	}
	return s.disk, nil
}

// PackCount is the number of packs listed (each once). The calls below
// need NumberPacks (or Finish) first.
func (s *ScratchIndex) PackCount() int { return len(s.packs) }

// PackNumber returns the number of pack pid, if an index file lists it.
func (s *ScratchIndex) PackNumber(pid id.ID) (int, bool) {
	return slices.BinarySearchFunc(s.packs, pid, func(pos uint32, t id.ID) int {
		lid := s.listings.At(int(pos)).ID
		return bytes.Compare(lid[:], t[:])
	})
}

// PackOf returns the number of the pack of the listing at pos.
func (s *ScratchIndex) PackOf(pos uint32) int { return int(s.packOf[pos]) }

// Pack returns the first listing of pack number n: the one the index
// files are read for (EachPack), and its position.
func (s *ScratchIndex) Pack(n int) (PackListing, uint32) {
	pos := s.packs[n]
	return s.listings.At(int(pos)), pos
}

// IsFirst reports whether the listing at pos is its pack's first.
func (s *ScratchIndex) IsFirst(pos uint32) bool { return s.packs[s.packOf[pos]] == pos }

// ErrIndexChanged means an index file read a second time (EachPack) does
// not list the packs it listed the first time.
var ErrIndexChanged = errors.New("index file changed while it was read")

// EachPack reads the index files again, one at a time, in the order they
// were added, and calls fn with the first listing of every pack: its
// blobs as that index file lists them. A file that cannot be read again
// goes to fileErr with its id (ErrIndexChanged when it lists other
// packs): the run stops with fileErr's error, or goes on without that
// file's packs when it returns nil. Call it once every index file is
// added (it numbers the packs if NumberPacks was not called).
func (s *ScratchIndex) EachPack(ctx context.Context, fn func(p index.PackBlobs) error, fileErr func(fid id.ID, err error) error) error {
	if err := s.NumberPacks(); err != nil {
		return err
	}
	pos := 0
	for _, f := range s.files {
		start := pos
		pos += f.packs
		file, err := s.r.IndexFile(ctx, f.id)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err == nil && !s.listsAt(file, start, f.packs) {
			err = fmt.Errorf("%s: %w", IndexKey(f.id), ErrIndexChanged)
		}
		if err != nil {
			if err := fileErr(f.id, err); err != nil {
				return err
			}
			continue
		}
		for i, p := range file.Packs {
			if !s.IsFirst(uint32(start + i)) {
				continue // a later listing of a pack
			}
			if err := fn(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// listsAt reports whether file lists the n packs listed at start.
func (s *ScratchIndex) listsAt(file *index.File, start, n int) bool {
	if len(file.Packs) != n {
		return false
	}
	for i, p := range file.Packs {
		if p.ID != s.listings.At(start+i).ID {
			return false
		}
	}
	return true
}

// Close closes the index, removes its files and releases its tables and
// those of the StoredPacks made from it, which must not be used after.
func (s *ScratchIndex) Close() {
	s.mu.Lock()
	for _, free := range s.frees {
		free()
	}
	s.frees, s.packs, s.packOf, s.numbered = nil, nil, nil, false
	s.listings.Free()
	s.mu.Unlock()
	if s.b == nil {
		return // pack listings only: nothing on disk
	}
	s.b.Close()
	if s.disk != nil {
		_ = s.disk.Close() // read-only
	}
	// Best effort: a directory left behind is removed a day later (see
	// ScratchIndex), or with the system's temporary directory.
	_ = os.RemoveAll(s.dir)
}
