package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
)

// ErrCorrupt means an index file could not be decoded.
var ErrCorrupt = errors.New("corrupt index file")

// Location is where a blob is stored.
type Location struct {
	Pack id.ID
	pack.Entry
}

// Index is the merged in-memory index. Safe for concurrent use.
type Index struct {
	mu    sync.RWMutex
	blobs map[id.ID]Location
	packs map[id.ID]int // blobs per pack
}

// New returns an empty index.
func New() *Index {
	return &Index{blobs: make(map[id.ID]Location), packs: make(map[id.ID]int)}
}

// Add records the blobs of one pack. A blob already known keeps its first
// location (duplicates from concurrent backups are harmless).
func (x *Index) Add(packID id.ID, entries []pack.Entry) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.packs[packID] += 0
	for _, e := range entries {
		if _, ok := x.blobs[e.ID]; ok {
			continue
		}
		x.blobs[e.ID] = Location{Pack: packID, Entry: e}
		x.packs[packID]++
	}
}

// Lookup returns a blob's location.
func (x *Index) Lookup(blob id.ID) (Location, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	l, ok := x.blobs[blob]
	return l, ok
}

// Has reports whether the blob is known.
func (x *Index) Has(blob id.ID) bool {
	_, ok := x.Lookup(blob)
	return ok
}

// Len is the number of blobs.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.blobs)
}

// Packs returns the ids of every pack the index names.
func (x *Index) Packs() []id.ID {
	x.mu.RLock()
	defer x.mu.RUnlock()
	out := make([]id.ID, 0, len(x.packs))
	for p := range x.packs {
		out = append(out, p)
	}
	return out
}

// Each calls fn for every blob, in no particular order, holding a read lock.
func (x *Index) Each(fn func(blob id.ID, loc Location)) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	for b, l := range x.blobs {
		fn(b, l)
	}
}

// PackBlobs are the blobs of one pack, as an index file records them.
type PackBlobs struct {
	ID    id.ID
	Blobs []pack.Entry
}

// File is the content of one index file.
type File struct {
	Packs []PackBlobs
}

const (
	magic        = "CSIX"
	version      = 1
	packRecord   = 32 + 4
	entryRecord  = 1 + 32 + 4 + 4
	maxFilePacks = 1 << 24
)

// Encode serialises the file.
func (f *File) Encode() []byte {
	n := len(magic) + 1 + 4
	for _, p := range f.Packs {
		n += packRecord + len(p.Blobs)*entryRecord
	}
	out := make([]byte, 0, n)
	out = append(out, magic...)
	out = append(out, version)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(f.Packs)))
	for _, p := range f.Packs {
		out = append(out, p.ID[:]...)
		out = binary.LittleEndian.AppendUint32(out, uint32(len(p.Blobs)))
		for _, e := range p.Blobs {
			out = append(out, byte(e.Type))
			out = append(out, e.ID[:]...)
			out = binary.LittleEndian.AppendUint32(out, e.Offset)
			out = binary.LittleEndian.AppendUint32(out, e.Length)
		}
	}
	return out
}

// Decode parses an index file, rejecting anything malformed.
func Decode(data []byte) (*File, error) {
	if len(data) < len(magic)+5 || string(data[:len(magic)]) != magic {
		return nil, fmt.Errorf("%w: bad magic", ErrCorrupt)
	}
	if data[len(magic)] != version {
		return nil, fmt.Errorf("%w: unknown version %d", ErrCorrupt, data[len(magic)])
	}
	p := data[len(magic)+1:]
	count := binary.LittleEndian.Uint32(p)
	p = p[4:]
	if count > maxFilePacks || int64(count)*packRecord > int64(len(p)) {
		return nil, fmt.Errorf("%w: claims %d packs in %d bytes", ErrCorrupt, count, len(data))
	}
	f := &File{Packs: make([]PackBlobs, count)}
	for i := range f.Packs {
		if len(p) < packRecord {
			return nil, fmt.Errorf("%w: truncated at pack %d", ErrCorrupt, i)
		}
		pb := &f.Packs[i]
		copy(pb.ID[:], p)
		n := binary.LittleEndian.Uint32(p[32:])
		p = p[packRecord:]
		if int64(n)*entryRecord > int64(len(p)) {
			return nil, fmt.Errorf("%w: pack %d claims %d blobs", ErrCorrupt, i, n)
		}
		pb.Blobs = make([]pack.Entry, n)
		for j := range pb.Blobs {
			e := &pb.Blobs[j]
			e.Type = pack.BlobType(p[0])
			copy(e.ID[:], p[1:33])
			e.Offset = binary.LittleEndian.Uint32(p[33:])
			e.Length = binary.LittleEndian.Uint32(p[37:])
			p = p[entryRecord:]
			if e.Type > pack.TreeBlob || e.Length > pack.MaxBlobSize || e.Length == 0 {
				return nil, fmt.Errorf("%w: pack %d blob %d: type %d length %d", ErrCorrupt, i, j, e.Type, e.Length)
			}
		}
	}
	if len(p) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes", ErrCorrupt, len(p))
	}
	return f, nil
}
