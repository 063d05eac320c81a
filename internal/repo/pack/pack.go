package pack

import (
	"errors"
	"fmt"
	"runtime"
	"slices"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"

	"github.com/cloudstic/cloudstic/internal/repo/crypt"
	"github.com/cloudstic/cloudstic/internal/repo/id"
)

// BlobType says what a blob holds.
type BlobType uint8

// Blob types.
const (
	DataBlob BlobType = 0
	TreeBlob BlobType = 1
)

// String names the type.
func (t BlobType) String() string {
	switch t {
	case DataBlob:
		return "data"
	case TreeBlob:
		return "tree"
	}
	return fmt.Sprintf("type%d", t)
}

// Limits that protect readers from hostile packs and indexes.
const (
	// MaxBlobSize bounds one sealed blob (chunks are at most 8 MiB; large
	// directory trees may be bigger).
	MaxBlobSize = 128 << 20
	// MaxEntries bounds the entries of one pack header (writers end a
	// pack at this many blobs).
	MaxEntries = 1 << 20
	// MaxHeaderSize bounds a pack's sealed header: the entry count,
	// MaxEntries entries of 37 bytes, the seal.
	MaxHeaderSize = 4 + MaxEntries*37 + crypt.Overhead

	// DefaultHeaderBlobs is how many blobs a reader of a pack's header
	// expects when it has no better idea (see the repository's
	// ReadPackHeader): a pack of 16 MiB in chunks of 1 MiB holds ~16, one
	// of small files' chunks hundreds.
	DefaultHeaderBlobs = 128
)

// MaxSize is the largest pack a writer makes in a repository whose packs
// hold packSize bytes, and so the bound of every read of a whole pack. A
// pack ends before the blob that would take it past packSize, header
// included (only a blob larger than a whole pack gets a pack of its own);
// writers before that ended a pack after the blob that took it to
// packSize. Either way a pack holds at most packSize bytes, one blob of up
// to MaxBlobSize, a header of up to MaxHeaderSize and its 4-byte length.
// For the default 16 MiB packs: 181 MiB.
func MaxSize(packSize int) int64 {
	return int64(packSize) + MaxBlobSize + MaxHeaderSize + 4
}

// ErrCorrupt means a pack, header or blob could not be decoded.
var ErrCorrupt = errors.New("corrupt data")

// Entry locates one blob inside a pack.
type Entry struct {
	Type   BlobType
	ID     id.ID
	Offset uint32
	Length uint32 // sealed length, in the pack
	// Plain is the blob's length once decrypted and decompressed, or 0
	// when unknown: the pack header does not record it (only index files
	// do, from version 2 on).
	Plain uint32
}

// SameLocation reports whether e and o name the same blob at the same
// place, whatever each knows of the plain length.
func (e Entry) SameLocation(o Entry) bool {
	return e.Type == o.Type && e.ID == o.ID && e.Offset == o.Offset && e.Length == o.Length
}

// Codec compresses and seals blobs, and reverses it. Safe for concurrent use.
type Codec struct {
	key *crypt.Key
	enc *zstd.Encoder
	dec *zstd.Decoder
	// plain holds the compressed-plaintext buffers of Encode (a backup's
	// largest short-lived allocation).
	plain *Buffers
}

// NewCodec returns a codec for key.
func NewCodec(key *crypt.Key) (*Codec, error) {
	// EncodeAll runs at most "concurrency" compressions at once: with 1,
	// the backup's blob workers took turns on a single encoder and
	// compression used one core (found in an execution trace of a 1 GB
	// backup). The checksum is off: every blob is authenticated by AES-GCM
	// and by its id, so zstd's xxhash only cost CPU. A 1 MiB window (chunks
	// average 1 MiB) saves ~3 MiB per encoder; on 8 MiB chunks of Go
	// source it cost 0.2 % of compressed size, on 1 MiB chunks nothing.
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest),
		zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)), zstd.WithLowerEncoderMem(true),
		zstd.WithEncoderCRC(false), zstd.WithWindowSize(1<<20))
	if err != nil {
		return nil, err
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(MaxBlobSize),
		zstd.WithDecoderMaxWindow(MaxBlobSize))
	if err != nil {
		return nil, err
	}
	return &Codec{key: key, enc: enc, dec: dec, plain: NewBuffers(runtime.GOMAXPROCS(0))}, nil
}

// Key returns the codec's key.
func (c *Codec) Key() *crypt.Key { return c.key }

// Encoding bytes: what follows the first byte of a stored blob's plaintext.
const (
	encRaw  = 0
	encZstd = 1
	encS2   = 2
)

// Compression says how a blob is compressed before it is sealed.
type Compression uint8

// Compressions. Whatever is chosen, a blob that would not shrink by at least
// 1/32 is stored raw, and readers decode every encoding.
const (
	// Zstd is zstd's fastest level: the smaller output (on log text, 23 %
	// of its size against s2's 31 %), at ~270 MB/s per core.
	Zstd Compression = iota
	// S2 is klauspost's S2 block format: ~2.5 times zstd's speed.
	S2
	// Off stores blobs raw.
	Off
)

// String names the compression's algorithm (the CLI's names are
// fast, small and off).
func (c Compression) String() string {
	switch c {
	case Zstd:
		return "zstd"
	case S2:
		return "s2"
	case Off:
		return "off"
	}
	return fmt.Sprintf("compression%d", uint8(c))
}

// Encode returns the stored form of a blob: compressed with zstd when that
// saves at least 1/32 of it, then sealed.
func (c *Codec) Encode(data []byte) ([]byte, error) {
	return c.AppendEncode(nil, data, Zstd)
}

// AppendEncode appends the stored form of a blob, compressed as comp says
// (see Encode), to dst, so callers can reuse their buffers.
func (c *Codec) AppendEncode(dst, data []byte, comp Compression) ([]byte, error) {
	plain := c.compress(data, comp)
	if plain == nil || len(plain)-1 >= len(data)-len(data)/32 {
		c.plain.Put(plain)
		plain = c.plain.Get(1 + len(data))
		plain = append(plain, encRaw)
		plain = append(plain, data...)
	}
	dst = slices.Grow(dst, c.key.SealedSize(len(plain)))
	out, err := c.key.Seal(dst, plain)
	c.plain.Put(plain)
	return out, err
}

// compress returns the encoding byte and compressed data in a buffer of
// c.plain, or nil when comp is Off.
func (c *Codec) compress(data []byte, comp Compression) []byte {
	switch comp {
	case Zstd:
		// Room for incompressible data in zstd's framing (raw blocks of
		// at most 128 KiB with a 3-byte header each, and the frame
		// header), so that EncodeAll never grows the buffer.
		plain := c.plain.Get(1 + len(data) + 3*(len(data)>>17+1) + 32)
		return c.enc.EncodeAll(data, append(plain, encZstd))
	case S2:
		room := s2.MaxEncodedLen(len(data))
		if room < 0 { // past s2's 4 GiB limit
			return nil
		}
		// s2.Encode writes into its first argument when that is at
		// least MaxEncodedLen long.
		plain := append(c.plain.Get(1+room), encS2)
		return plain[:1+len(s2.Encode(plain[1:1+room], data))]
	}
	return nil
}

// Decode opens a stored blob and checks that its plaintext hashes to want.
func (c *Codec) Decode(sealed []byte, want id.ID) ([]byte, error) {
	_, data, err := c.decode(nil, nil, sealed, want)
	return data, err
}

// decode is Decode appending the decrypted form to plainBuf and the
// decompressed one to dataBuf; it returns both.
func (c *Codec) decode(plainBuf, dataBuf, sealed []byte, want id.ID) (plain, data []byte, err error) {
	plain, err = c.key.Open(plainBuf, sealed)
	if err != nil {
		return plainBuf, nil, fmt.Errorf("blob %s: %w", want.Short(), err)
	}
	data, err = c.unpack(plain, dataBuf, want)
	return plain, data, err
}

// unpack returns the data of a decrypted blob, plain: decompressed into
// dataBuf (appended) or, when stored raw, lying in plain. It checks that
// the data hashes to want.
func (c *Codec) unpack(plain, dataBuf []byte, want id.ID) (data []byte, err error) {
	if len(plain) == 0 {
		return nil, fmt.Errorf("blob %s: %w: empty", want.Short(), ErrCorrupt)
	}
	switch plain[0] {
	case encRaw:
		data = plain[1:]
	case encZstd, encS2:
		data, err = c.decompress(plain[0], plain[1:], dataBuf)
		if err != nil {
			return nil, fmt.Errorf("blob %s: %w", want.Short(), err)
		}
	default:
		return nil, fmt.Errorf("blob %s: %w: unknown encoding %d", want.Short(), ErrCorrupt, plain[0])
	}
	if got := c.key.ID(data); got != want {
		return nil, fmt.Errorf("blob %s: %w: content hashes to %s", want.Short(), ErrCorrupt, got.Short())
	}
	return data, nil
}

// decompress appends the decompressed form of payload, in encoding enc, to
// dst. Errors wrap ErrCorrupt.
func (c *Codec) decompress(enc byte, payload, dst []byte) ([]byte, error) {
	if enc == encZstd {
		out, err := c.dec.DecodeAll(payload, dst)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		return out, nil
	}
	// The block states its decoded length; a hostile one must not make
	// s2 allocate more than any blob may hold.
	n, err := s2.DecodedLen(payload)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if n > MaxBlobSize {
		return nil, fmt.Errorf("%w: s2 block of %d bytes exceeds %d", ErrCorrupt, n, MaxBlobSize)
	}
	dst = slices.Grow(dst, n)
	out, err := s2.Decode(dst[len(dst):len(dst)+n], payload)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return dst[:len(dst)+len(out)], nil
}

// Decoder decodes blobs like Codec.Decode into two buffers it keeps, so a
// restore of large files does not allocate (and the kernel zero) fresh
// memory for every chunk. What Decode returns is valid until its next call.
// Not safe for concurrent use.
type Decoder struct {
	c           *Codec
	plain, data []byte
}

// NewDecoder returns a Decoder for c's blobs.
func (c *Codec) NewDecoder() *Decoder { return &Decoder{c: c} }

// NewDecoderWith returns a Decoder that starts with the given buffers (say
// memory mapped outside the heap) for the decrypted and the decompressed
// forms; a blob that needs more grows them on the heap. The caller must
// not use either buffer while the Decoder is in use.
func (c *Codec) NewDecoderWith(plain, data []byte) *Decoder {
	return &Decoder{c: c, plain: plain[:0], data: data[:0]}
}

// Decode opens a stored blob and checks that its plaintext hashes to want.
func (d *Decoder) Decode(sealed []byte, want id.ID) ([]byte, error) {
	plain, data, err := d.c.decode(d.plain[:0], d.data[:0], sealed, want)
	d.plain = plain[:0]
	if len(plain) > 0 && plain[0] != encRaw && cap(data) > cap(d.data) {
		d.data = data[:0] // grown by decompress (a raw blob's data lies in plain)
	}
	return data, err
}

// DecodeInPlace is Decode decrypting in sealed's own memory, which it
// overwrites (after a failure too): a blob stored raw needs no second
// buffer. What it returns is valid until the next call or until sealed is
// reused.
func (d *Decoder) DecodeInPlace(sealed []byte, want id.ID) ([]byte, error) {
	plain, err := d.c.key.OpenInPlace(sealed)
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w", want.Short(), err)
	}
	data, err := d.c.unpack(plain, d.data[:0], want)
	if err == nil && plain[0] != encRaw && cap(data) > cap(d.data) {
		d.data = data[:0] // grown by decompress
	}
	return data, err
}

// EncodeRaw seals metadata objects (index files, snapshots) the same way
// blobs are: compressed when it helps, then sealed. No id check on decode.
func (c *Codec) EncodeRaw(data []byte) ([]byte, error) { return c.Encode(data) }

// DecodeRaw reverses EncodeRaw.
func (c *Codec) DecodeRaw(sealed []byte) ([]byte, error) {
	plain, err := c.key.Open(nil, sealed)
	if err != nil {
		return nil, err
	}
	if len(plain) == 0 {
		return nil, fmt.Errorf("%w: empty object", ErrCorrupt)
	}
	switch plain[0] {
	case encRaw:
		return plain[1:], nil
	case encZstd, encS2:
		return c.decompress(plain[0], plain[1:], nil)
	}
	return nil, fmt.Errorf("%w: unknown encoding %d", ErrCorrupt, plain[0])
}
