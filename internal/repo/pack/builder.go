package pack

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/cloudstic/cloudstic/internal/repo/crypt"
	"github.com/cloudstic/cloudstic/internal/repo/id"
)

// A pack is its sealed blobs back to back, then its sealed header (the
// entry count and, for each blob, its type, id and length), then the
// header's length in 4 bytes: writers build it with a Builder, readers
// find the header from the end (HeaderLength, ParseHeader).

// Builder accumulates sealed blobs into one pack. Not safe for concurrent use.
type Builder struct {
	buf     []byte
	entries []Entry
}

// NewBuilder returns a builder with room for about capacity bytes.
func NewBuilder(capacity int) *Builder { return &Builder{buf: make([]byte, 0, capacity)} }

// NewBuilderBuffer returns a builder that reuses buf's memory (for example
// the bytes of a pack already uploaded).
func NewBuilderBuffer(buf []byte) *Builder { return &Builder{buf: buf[:0]} }

// Add appends a sealed blob whose plain form is plainLen bytes long.
func (b *Builder) Add(t BlobType, blobID id.ID, sealed []byte, plainLen int) {
	b.entries = append(b.entries, Entry{Type: t, ID: blobID, Offset: uint32(len(b.buf)), Length: uint32(len(sealed)),
		Plain: uint32(plainLen)})
	b.buf = append(b.buf, sealed...)
}

// FinishedSize is the length Finish would return after one more blob of
// sealedLen bytes were added (0: none): blobs, sealed header and trailer.
func (b *Builder) FinishedSize(sealedLen int) int {
	n := len(b.entries)
	if sealedLen > 0 {
		n++
	}
	return len(b.buf) + sealedLen + int(HeaderSize(n)) + 4
}

// HeaderSize is the length of the sealed header of a pack of n blobs: the
// entry count, n entries of 37 bytes, the seal. The 4-byte length that
// follows it is not included.
func HeaderSize(n int) int64 { return 4 + int64(n)*37 + crypt.Overhead }

// Count is the number of blobs so far.
func (b *Builder) Count() int { return len(b.entries) }

// Buffer returns the builder's memory, empty, for a new builder (see
// NewBuilderBuffer) once the bytes Finish returned are no longer needed.
func (b *Builder) Buffer() []byte { return b.buf[:0] }

// Finish appends the sealed header and returns the pack's bytes, its id and
// its entries. Only Buffer may be called afterwards.
func (b *Builder) Finish(key *crypt.Key) ([]byte, id.ID, []Entry, error) {
	hdr := make([]byte, 4, 4+len(b.entries)*37)
	binary.LittleEndian.PutUint32(hdr, uint32(len(b.entries)))
	for _, e := range b.entries {
		hdr = append(hdr, byte(e.Type))
		hdr = append(hdr, e.ID[:]...)
		hdr = binary.LittleEndian.AppendUint32(hdr, e.Length)
	}
	start := len(b.buf)
	out, err := key.Seal(b.buf, hdr)
	if err != nil {
		return nil, id.ID{}, nil, err
	}
	out = binary.LittleEndian.AppendUint32(out, uint32(len(out)-start))
	b.buf = out
	return out, sha256.Sum256(out), b.entries, nil
}

// HeaderLength reads the trailing length field of a pack of packSize bytes.
func HeaderLength(tail []byte, packSize int64) (int64, error) {
	if len(tail) != 4 {
		return 0, fmt.Errorf("%w: pack trailer is %d bytes", ErrCorrupt, len(tail))
	}
	n := int64(binary.LittleEndian.Uint32(tail))
	if n+4 > packSize || n > MaxHeaderSize {
		return 0, fmt.Errorf("%w: header length %d does not fit a pack of %d bytes", ErrCorrupt, n, packSize)
	}
	return n, nil
}

// ParseHeader decodes a pack's sealed header; headerOffset is where it
// starts, so that every entry is checked to lie before it.
func ParseHeader(key *crypt.Key, sealed []byte, headerOffset int64) ([]Entry, error) {
	hdr, err := key.Open(nil, sealed)
	if err != nil {
		return nil, fmt.Errorf("pack header: %w", err)
	}
	return decodeHeader(hdr, headerOffset)
}

func decodeHeader(hdr []byte, headerOffset int64) ([]Entry, error) {
	if len(hdr) < 4 {
		return nil, fmt.Errorf("%w: pack header too short", ErrCorrupt)
	}
	n := binary.LittleEndian.Uint32(hdr)
	if n > MaxEntries || int64(len(hdr)) != 4+int64(n)*37 {
		return nil, fmt.Errorf("%w: pack header claims %d entries in %d bytes", ErrCorrupt, n, len(hdr))
	}
	entries := make([]Entry, n)
	var off int64
	p := hdr[4:]
	for i := range entries {
		e := &entries[i]
		e.Type = BlobType(p[0])
		copy(e.ID[:], p[1:33])
		e.Length = binary.LittleEndian.Uint32(p[33:37])
		p = p[37:]
		if e.Type > TreeBlob || e.Length > MaxBlobSize {
			return nil, fmt.Errorf("%w: pack header entry %d: type %d length %d", ErrCorrupt, i, e.Type, e.Length)
		}
		e.Offset = uint32(off)
		off += int64(e.Length)
		if off > headerOffset {
			return nil, fmt.Errorf("%w: pack header entry %d ends past the blobs", ErrCorrupt, i)
		}
	}
	return entries, nil
}
