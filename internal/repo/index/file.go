package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
)

// ErrCorrupt means an index file could not be decoded.
var ErrCorrupt = errors.New("corrupt index file")

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
	magic = "CSIX"
	// versionNoPlain files (before plain lengths) still read.
	versionNoPlain = 1
	version        = 2
	packRecord     = 32 + 4
	maxFilePacks   = 1 << 24
)

// entryRecord is the size of one blob's record in a file of version v.
func entryRecord(v byte) int {
	if v == versionNoPlain {
		return 1 + 32 + 4 + 4
	}
	return 1 + 32 + 4 + 4 + 4
}

// HeaderLen is the length of an encoded file naming no pack.
const HeaderLen = len(magic) + 1 + 4

// EncodedLen is the length of p's record in an encoded file: an encoded
// file is HeaderLen bytes plus the records of its packs.
func (p PackBlobs) EncodedLen() int { return PackRecordLen(len(p.Blobs)) }

// PackRecordLen is the encoded length of the record of a pack of blobs
// blobs (in the current version).
func PackRecordLen(blobs int) int { return packRecord + blobs*entryRecord(version) }

// Encode serialises the file (in the current version).
func (f *File) Encode() []byte {
	n := HeaderLen
	for _, p := range f.Packs {
		n += p.EncodedLen()
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
			out = binary.LittleEndian.AppendUint32(out, e.Plain)
		}
	}
	return out
}

// Decode parses an index file of either version, rejecting anything
// malformed. Allocations are bounded by len(data).
func Decode(data []byte) (*File, error) {
	var f *File
	err := walk(data, func(n uint32) { f = &File{Packs: make([]PackBlobs, 0, n)} },
		func(p PackBlobs) error {
			f.Packs = append(f.Packs, PackBlobs{ID: p.ID, Blobs: slices.Clone(p.Blobs)})
			return nil
		})
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Walk parses an index file like Decode but hands each pack to fn as it
// goes, in a slice of blobs it reuses for the next pack, instead of
// building the whole file in memory; fn's error stops it. A malformed
// file fails it, possibly after fn saw the packs before the damage.
func Walk(data []byte, fn func(PackBlobs) error) error {
	return walk(data, func(uint32) {}, fn)
}

// walk parses data, calling start with the pack count before the first
// pack.
func walk(data []byte, start func(uint32), fn func(PackBlobs) error) error {
	if len(data) < len(magic)+5 || string(data[:len(magic)]) != magic {
		return fmt.Errorf("%w: bad magic", ErrCorrupt)
	}
	v := data[len(magic)]
	if v != version && v != versionNoPlain {
		return fmt.Errorf("%w: unknown version %d", ErrCorrupt, v)
	}
	record := entryRecord(v)
	p := data[len(magic)+1:]
	count := binary.LittleEndian.Uint32(p)
	p = p[4:]
	if count > maxFilePacks || int64(count)*packRecord > int64(len(p)) {
		return fmt.Errorf("%w: claims %d packs in %d bytes", ErrCorrupt, count, len(data))
	}
	start(count)
	var pb PackBlobs
	for i := range int(count) {
		if len(p) < packRecord {
			return fmt.Errorf("%w: truncated at pack %d", ErrCorrupt, i)
		}
		copy(pb.ID[:], p)
		n := binary.LittleEndian.Uint32(p[32:])
		p = p[packRecord:]
		if int64(n)*int64(record) > int64(len(p)) {
			return fmt.Errorf("%w: pack %d claims %d blobs", ErrCorrupt, i, n)
		}
		pb.Blobs = slices.Grow(pb.Blobs[:0], int(n))[:n]
		for j := range pb.Blobs {
			e := &pb.Blobs[j]
			e.Type = pack.BlobType(p[0])
			copy(e.ID[:], p[1:33])
			e.Offset = binary.LittleEndian.Uint32(p[33:])
			e.Length = binary.LittleEndian.Uint32(p[37:])
			e.Plain = 0
			if v != versionNoPlain {
				e.Plain = binary.LittleEndian.Uint32(p[41:])
			}
			p = p[record:]
			if e.Type > pack.TreeBlob || e.Length > pack.MaxBlobSize || e.Length == 0 || e.Plain > pack.MaxBlobSize {
				return fmt.Errorf("%w: pack %d blob %d: type %d length %d plain length %d", ErrCorrupt, i, j, e.Type, e.Length, e.Plain)
			}
		}
		if err := fn(pb); err != nil {
			return err
		}
	}
	if len(p) != 0 {
		return fmt.Errorf("%w: %d trailing bytes", ErrCorrupt, len(p))
	}
	return nil
}
