package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"sync"

	"github.com/cloudstic/cloudstic/internal/repo/id"
)

// ErrDiskCorrupt means an on-disk index file is malformed or fails a
// checksum: it must be rebuilt from the repository's index files.
var ErrDiskCorrupt = errors.New("corrupt on-disk index")

// The on-disk index is a local file derived from a set of index files (it
// is never stored in the repository): every distinct blob's canonical
// entry, sorted by blob id, in 4 KiB blocks that a lookup reads with one
// pread. Only a table of each block's first id prefix (8 bytes per 85
// blobs: 9.4 MB at 100 M blobs) stays in memory, so a backup's memory no
// longer grows with the repository; the kernel's page cache holds the
// blocks read, and gives them back under pressure.
//
// Layout, little-endian; every block is 4 KiB and ends with the CRC-32C
// of the rest, so that a torn or rotted block is found whatever the key:
//
//	header block: "CSDX", version, 3 zero bytes, uint64 entries, packs,
//	  covered index files, uint32 sealed payload size
//	record blocks: a sealed payload (the repository key's Seal: AES-GCM
//	  with a random nonce, or the plain bytes in an unencrypted
//	  repository) of uint32 count and up to 84 records of 48 bytes (blob
//	  id, uint32 pack position, offset, sealed length with treeBit, plain
//	  length), zero-padded, then zeros up to the CRC
//	pack blocks: the same with up to 126 pack ids (a record's pack
//	  position indexes them)
//	first ids: uint64 big-endian prefix of each record block's first
//	  blob id, then a CRC-32C of them
//	covered files: the sorted ids of the index files the entries come
//	  from, then a CRC-32C of them
//
// So the file holds no location in the clear where the repository is
// encrypted: only blob id prefixes (keyed hashes, equal for equal
// content, as in the store) and index file ids (the store's key names).
const (
	diskMagic       = "CSDX"
	diskVersion     = 1
	blockSize       = 4096
	diskRecord      = 48
	recordsPerBlock = 84  // 4 + 84 × 48 = payloadSize
	packsPerBlock   = 126 // 4 + 126 × 32 = payloadSize
	payloadSize     = 4036
	crcOffset       = blockSize - 4
	maxDiskEntries  = 1 << 40
)

// Sealer protects the blocks of an on-disk index: the repository's key
// (crypt.Key) is one.
type Sealer interface {
	// Seal appends the sealed form of plain to dst.
	Seal(dst, plain []byte) ([]byte, error)
	// OpenInPlace verifies and opens sealed in its own memory.
	OpenInPlace(sealed []byte) ([]byte, error)
	// SealedSize is the sealed size of n bytes.
	SealedSize(n int) int
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// diskLayout is where each section of a file with these counts starts.
type diskLayout struct {
	entries, packs, files uint64
	sealed                uint32 // the sealed size of a block's payload
	recordBlocks          uint64
	packBlocks            uint64
	packsOff, firstsOff   int64
	filesOff, size        int64
}

func layoutOf(entries, packs, files uint64, sealed uint32) diskLayout {
	l := diskLayout{entries: entries, packs: packs, files: files, sealed: sealed,
		recordBlocks: (entries + recordsPerBlock - 1) / recordsPerBlock,
		packBlocks:   (packs + packsPerBlock - 1) / packsPerBlock}
	l.packsOff = blockSize + int64(l.recordBlocks)*blockSize
	l.firstsOff = l.packsOff + int64(l.packBlocks)*blockSize
	l.filesOff = l.firstsOff + int64(l.recordBlocks)*8 + 4
	l.size = l.filesOff + int64(files)*32 + 4
	return l
}

func (l diskLayout) header() []byte {
	h := make([]byte, blockSize)
	copy(h, diskMagic)
	h[4] = diskVersion
	binary.LittleEndian.PutUint64(h[8:], l.entries)
	binary.LittleEndian.PutUint64(h[16:], l.packs)
	binary.LittleEndian.PutUint64(h[24:], l.files)
	binary.LittleEndian.PutUint32(h[32:], l.sealed)
	sealBlock(h)
	return h
}

// sealBlock writes the CRC-32C of a block's first bytes into its last 4.
func sealBlock(b []byte) {
	binary.LittleEndian.PutUint32(b[crcOffset:], crc32.Checksum(b[:crcOffset], castagnoli))
}

func blockSealed(b []byte) bool {
	return binary.LittleEndian.Uint32(b[crcOffset:]) == crc32.Checksum(b[:crcOffset], castagnoli)
}

// Disk is an open on-disk index file. Safe for concurrent use.
type Disk struct {
	f      *os.File
	path   string
	sealer Sealer
	l      diskLayout
	firsts []byte  // big-endian uint64 prefix of each record block's first blob id
	files  []id.ID // index files covered, sorted
	blocks sync.Pool
	mem    []byte // the whole file, once Preload has read it
}

// OpenDisk opens an on-disk index file sealed with sealer, checking its
// header, its size and the checksums of the sections it keeps in memory
// (record and pack blocks are checked and opened as they are read).
func OpenDisk(path string, sealer Sealer) (*Disk, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	d, err := openDisk(f, path, sealer)
	if err != nil {
		_ = f.Close() // read-only: nothing to lose
		return nil, err
	}
	return d, nil
}

func openDisk(f *os.File, path string, sealer Sealer) (*Disk, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	h := make([]byte, blockSize)
	if _, err := f.ReadAt(h, 0); err != nil {
		return nil, fmt.Errorf("%s: %w: header: %w", path, ErrDiskCorrupt, err)
	}
	l, err := parseHeader(h, st.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int(l.sealed) != sealer.SealedSize(payloadSize) {
		return nil, fmt.Errorf("%s: %w: sealed with another kind of key", path, ErrDiskCorrupt)
	}
	tail := make([]byte, l.size-l.firstsOff)
	if _, err := f.ReadAt(tail, l.firstsOff); err != nil {
		return nil, fmt.Errorf("%s: %w: %w", path, ErrDiskCorrupt, err)
	}
	firsts, files, err := parseTail(tail, l)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	d := &Disk{f: f, path: path, sealer: sealer, l: l, firsts: firsts, files: files}
	d.blocks.New = func() any { return new([blockSize]byte) }
	return d, nil
}

// parseHeader checks the header block of a file of size bytes.
func parseHeader(h []byte, size int64) (diskLayout, error) {
	if string(h[:4]) != diskMagic || h[4] != diskVersion || !blockSealed(h) {
		return diskLayout{}, fmt.Errorf("%w: bad header", ErrDiskCorrupt)
	}
	entries := binary.LittleEndian.Uint64(h[8:])
	packs := binary.LittleEndian.Uint64(h[16:])
	files := binary.LittleEndian.Uint64(h[24:])
	if entries > maxDiskEntries || packs > maxDiskEntries || files > maxDiskEntries {
		return diskLayout{}, fmt.Errorf("%w: counts out of range", ErrDiskCorrupt)
	}
	sealed := binary.LittleEndian.Uint32(h[32:])
	if sealed < payloadSize || sealed > crcOffset {
		return diskLayout{}, fmt.Errorf("%w: sealed payload of %d bytes", ErrDiskCorrupt, sealed)
	}
	l := layoutOf(entries, packs, files, sealed)
	if l.size != size {
		return diskLayout{}, fmt.Errorf("%w: %d bytes, the header implies %d", ErrDiskCorrupt, size, l.size)
	}
	return l, nil
}

// parseTail decodes the first ids and covered files sections.
func parseTail(tail []byte, l diskLayout) ([]byte, []id.ID, error) {
	nf := int(l.recordBlocks) * 8
	fs, cs := tail[:nf], tail[nf+4:]
	if binary.LittleEndian.Uint32(tail[nf:]) != crc32.Checksum(fs, castagnoli) ||
		binary.LittleEndian.Uint32(cs[len(cs)-4:]) != crc32.Checksum(cs[:len(cs)-4], castagnoli) {
		return nil, nil, fmt.Errorf("%w: checksum of the first ids or covered files", ErrDiskCorrupt)
	}
	// Kept as read (parsing it into a []uint64 would hold it twice while
	// opening: 19 MB at 100 M blobs).
	firsts := fs[:len(fs):len(fs)]
	for i := 1; i < int(l.recordBlocks); i++ {
		if binary.BigEndian.Uint64(fs[i*8:]) < binary.BigEndian.Uint64(fs[(i-1)*8:]) {
			return nil, nil, fmt.Errorf("%w: blocks out of order", ErrDiskCorrupt)
		}
	}
	files := make([]id.ID, l.files)
	for i := range files {
		copy(files[i][:], cs[i*32:])
		if i > 0 && bytes.Compare(files[i-1][:], files[i][:]) >= 0 {
			return nil, nil, fmt.Errorf("%w: covered files out of order", ErrDiskCorrupt)
		}
	}
	return firsts, files, nil
}

// Preload reads the whole file into memory, so that lookups no longer
// read it: for a file small enough to hold, where a pread per lookup was
// most of the cost (the check of a small repository). Call it before any
// lookup.
func (d *Disk) Preload() error {
	buf := make([]byte, d.l.size)
	if _, err := d.f.ReadAt(buf, 0); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: %w", d.path, err)
	}
	d.mem = buf
	return nil
}

// Close closes the file.
func (d *Disk) Close() error { return d.f.Close() }

// Path is the file's path.
func (d *Disk) Path() string { return d.path }

// Len is the number of distinct blobs in the file.
func (d *Disk) Len() int { return int(d.l.entries) }

// Size is the file's size in bytes.
func (d *Disk) Size() int64 { return d.l.size }

// Files returns the sorted ids of the index files the file covers.
func (d *Disk) Files() []id.ID { return d.files }

// PackCount is the number of pack ids in the file's pack table (a pack
// listed by two index files may be there twice).
func (d *Disk) PackCount() int { return int(d.l.packs) }

// readBlock reads block i of the section at off into b, checks and
// opens it, and returns its items (per at most, total in the section) of
// size bytes each, as one slice of b.
func (d *Disk) readBlock(b *[blockSize]byte, off int64, i, total, per uint64, size int) ([]byte, int, error) {
	at := off + int64(i)*blockSize
	bad := func(why string) error {
		return fmt.Errorf("%s: %w: block %d at %d: %s", d.path, ErrDiskCorrupt, i, off, why)
	}
	if d.mem != nil {
		clear(b[copy(b[:], d.mem[min(at, int64(len(d.mem))):]):])
	} else if n, err := d.f.ReadAt(b[:], at); n < blockSize {
		if errors.Is(err, io.EOF) {
			// Truncated since it was opened. The rest of b holds an
			// earlier block, which must not pass for this one.
			return nil, 0, bad("truncated")
		}
		return nil, 0, fmt.Errorf("%s: %w", d.path, err)
	}
	if !blockSealed(b[:]) {
		return nil, 0, bad("checksum")
	}
	payload, err := d.sealer.OpenInPlace(b[:d.l.sealed])
	if err != nil || len(payload) != payloadSize {
		return nil, 0, bad("does not open with the repository's key")
	}
	n := binary.LittleEndian.Uint32(payload)
	if uint64(n) != min(per, total-i*per) {
		return nil, 0, bad("item count")
	}
	return payload[4 : 4+int(n)*size], int(n), nil
}

// lookup returns the entry of blob, if the file holds it.
func (d *Disk) lookup(blob *id.ID) (entry, bool, error) {
	r, ok, err := d.Find(*blob)
	if err != nil || !ok {
		return entry{}, false, err
	}
	return newEntry(r.Pack, r.Entry), true, nil
}

// first is the prefix of record block i's first blob id.
func (d *Disk) first(i int) uint64 { return binary.BigEndian.Uint64(d.firsts[i*8:]) }

// pack returns the id at position p of the pack table.
func (d *Disk) pack(p uint32) (id.ID, error) {
	if uint64(p) >= d.l.packs {
		return id.ID{}, fmt.Errorf("%s: %w: pack position %d of %d", d.path, ErrDiskCorrupt, p, d.l.packs)
	}
	b := d.blocks.Get().(*[blockSize]byte)
	defer d.blocks.Put(b)
	ids, _, err := d.readBlock(b, d.l.packsOff, uint64(p)/packsPerBlock, d.l.packs, packsPerBlock, 32)
	if err != nil {
		return id.ID{}, err
	}
	var out id.ID
	k := (uint64(p) % packsPerBlock) * 32
	copy(out[:], ids[k:k+32])
	return out, nil
}

func encodeRecord(b []byte, e *entry) {
	copy(b, e.id[:])
	binary.LittleEndian.PutUint32(b[32:], e.pack)
	binary.LittleEndian.PutUint32(b[36:], e.offset)
	binary.LittleEndian.PutUint32(b[40:], e.length)
	binary.LittleEndian.PutUint32(b[44:], e.plain)
}

func decodeRecord(b []byte) entry {
	var e entry
	copy(e.id[:], b)
	e.pack = binary.LittleEndian.Uint32(b[32:])
	e.offset = binary.LittleEndian.Uint32(b[36:])
	e.length = binary.LittleEndian.Uint32(b[40:])
	e.plain = binary.LittleEndian.Uint32(b[44:])
	return e
}

// eachRecord calls fn with every record in id order, reading the file
// sequentially; fn's error stops the walk.
func (d *Disk) eachRecord(fn func(e *entry) error) error {
	b := d.blocks.Get().(*[blockSize]byte)
	defer d.blocks.Put(b)
	for i := range d.l.recordBlocks {
		recs, n, err := d.readBlock(b, blockSize, i, d.l.entries, recordsPerBlock, diskRecord)
		if err != nil {
			return err
		}
		for j := range n {
			e := decodeRecord(recs[j*diskRecord:])
			if err := fn(&e); err != nil {
				return err
			}
		}
	}
	return nil
}

// EachPack calls fn with every id of the pack table, in order (a pack
// listed by two index files comes twice); fn's error stops the walk.
func (d *Disk) EachPack(fn func(id.ID) error) error {
	b := d.blocks.Get().(*[blockSize]byte)
	defer d.blocks.Put(b)
	for i := range d.l.packBlocks {
		ids, n, err := d.readBlock(b, d.l.packsOff, i, d.l.packs, packsPerBlock, 32)
		if err != nil {
			return err
		}
		for j := range n {
			var p id.ID
			copy(p[:], ids[j*32:])
			if err := fn(p); err != nil {
				return err
			}
		}
	}
	return nil
}
