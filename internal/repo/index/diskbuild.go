package index

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/cloudstic/cloudstic/internal/repo/id"
)

// DiskSuffix ends the name of every on-disk index file; DiskName gives
// the whole name.
const DiskSuffix = ".csdx"

// Bounds of a build's memory: entries are sorted in runs of runEntries
// (12 MiB, mapped outside the Go heap) and written to temporary files,
// then merged; once maxRuns runs are waiting they are merged into one
// longer run first (and maxRuns of those into one), so that a build never
// holds more than 2 × maxRuns files open (macOS allows a process 256 by
// default) and writes each entry at most three times before the file.
const (
	runEntries = 1 << 18
	maxRuns    = 64
	ioBuffer   = 64 << 10
)

// DiskName is the file name of the on-disk index covering files: named
// by them, so that a file built from another set is never taken for it.
func DiskName(files []id.ID) string {
	h := sha256.New()
	for _, f := range files {
		h.Write(f[:])
	}
	return "index-" + hex.EncodeToString(h.Sum(nil)) + DiskSuffix
}

// DiskBuilder writes an on-disk index file from index files in bounded
// memory. AddPack, Covers and AddFile may be called from several
// goroutines; then Finish once, and Close in every case.
type DiskBuilder struct {
	dir    string
	sealer Sealer
	runCap int

	mu     sync.Mutex
	mem    *mapped
	run    []entry
	runs   []*os.File // sorted runs of runCap entries, oldest first
	merged []*os.File // runs of maxRuns runs each, older than runs
	packs  *os.File
	packW  *bufio.Writer
	npacks uint32
	added  uint64 // entries added, copies included
	files  []id.ID
	prefer func(a, b uint32) bool
	noSync bool
	err    error
}

// NewDiskBuilder starts a build whose temporary and final files go in dir,
// the final file's blocks sealed with sealer. The temporary files (sorted
// runs) hold entries in the clear, in a directory only the user reads,
// and are removed as soon as they are merged.
func NewDiskBuilder(dir string, sealer Sealer) (*DiskBuilder, error) {
	return newDiskBuilder(dir, sealer, runEntries)
}

func newDiskBuilder(dir string, sealer Sealer, runCap int) (*DiskBuilder, error) {
	packs, err := os.CreateTemp(dir, "tmp-packs-*")
	if err != nil {
		return nil, err
	}
	mem := newMapped()
	return &DiskBuilder{dir: dir, sealer: sealer, runCap: runCap, mem: mem, run: mem.entries(runCap),
		packs: packs, packW: bufio.NewWriterSize(packs, ioBuffer)}, nil
}

// AddFile adds the blobs of the index file fileID: AddPack for each of
// its packs, then Covers.
func (b *DiskBuilder) AddFile(fileID id.ID, f *File) error {
	for _, p := range f.Packs {
		if err := b.AddPack(p); err != nil {
			return err
		}
	}
	b.Covers(fileID)
	return nil
}

// Covers records that the file covers the index file fileID, all of
// whose packs have been added.
func (b *DiskBuilder) Covers(fileID id.ID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.files = append(b.files, fileID)
}

// AddPack adds the blobs of one pack (p.Blobs is not kept).
func (b *DiskBuilder) AddPack(p PackBlobs) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return b.err
	}
	if _, err := b.packW.Write(p.ID[:]); err != nil {
		b.err = err
		return err
	}
	for _, e := range p.Blobs {
		if len(b.run) == b.runCap {
			if err := b.flushRun(); err != nil {
				b.err = err
				return err
			}
		}
		b.run = append(b.run, newEntry(b.npacks, e))
		b.added++
	}
	b.npacks++
	return nil
}

// Prefer makes Finish take as a blob's canonical entry, of its copies in
// several packs, the copy in the pack that sorts first by less (of equal
// ones, the first added), rather than the first added: check prefers
// packs that exist, prune also the newest. less is given positions in the
// final pack table. Call it before Finish.
func (b *DiskBuilder) Prefer(less func(a, b uint32) bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.prefer = less
}

// NoSync makes Finish skip the fsync of the file: for a file that lives
// only as long as the process (repo.ScratchIndex), which a crash leaves
// for the litter, not to be read.
func (b *DiskBuilder) NoSync() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.noSync = true
}

// flushRun sorts the entries held and writes them to a run file, merging
// the runs into one when there are maxRuns of them.
func (b *DiskBuilder) flushRun() error {
	if len(b.run) == 0 {
		return nil
	}
	// Of several copies of a blob, the one in the pack added first (and
	// first in it) comes first: the copy the in-memory index would call
	// canonical.
	slices.SortFunc(b.run, func(x, y entry) int {
		if c := bytes.Compare(x.id[:], y.id[:]); c != 0 {
			return c
		}
		if c := cmp.Compare(x.pack, y.pack); c != 0 {
			return c
		}
		return cmp.Compare(x.offset, y.offset)
	})
	f, err := os.CreateTemp(b.dir, "tmp-run-*")
	if err != nil {
		return err
	}
	b.runs = append(b.runs, f)
	w := bufio.NewWriterSize(f, ioBuffer)
	var rec [diskRecord]byte
	for i := range b.run {
		encodeRecord(rec[:], &b.run[i])
		if _, err := w.Write(rec[:]); err != nil {
			return err
		}
	}
	b.run = b.run[:0]
	if err := w.Flush(); err != nil {
		return err
	}
	if len(b.runs) < maxRuns {
		return nil
	}
	f, err = b.mergeRuns(b.runs)
	if err != nil {
		return err
	}
	b.runs, b.merged = nil, append(b.merged, f)
	if len(b.merged) < maxRuns {
		return nil
	}
	if f, err = b.mergeRuns(b.merged); err != nil {
		return err
	}
	b.merged = []*os.File{f}
	return nil
}

// mergeRuns merges sorted runs into a new one and removes them.
func (b *DiskBuilder) mergeRuns(runs []*os.File) (*os.File, error) {
	merged, err := os.CreateTemp(b.dir, "tmp-run-*")
	if err != nil {
		return nil, err
	}
	srcs := make([]source, len(runs))
	for i, r := range runs {
		srcs[i] = newRunSource(r)
	}
	w := bufio.NewWriterSize(merged, ioBuffer)
	var rec [diskRecord]byte
	err = mergeSources(srcs, func(e *entry) error {
		encodeRecord(rec[:], e)
		_, err := w.Write(rec[:])
		return err
	})
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		removeAll([]*os.File{merged})
		return nil, err
	}
	removeAll(runs)
	return merged, nil
}

// Finish merges the runs, and base's entries when base is not nil (its
// entries are preferred, its pack positions kept), into the on-disk index
// file covering base's files and those added, and returns its path. An
// existing file of that name is replaced: it covers the same files.
func (b *DiskBuilder) Finish(base *Disk) (path string, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return "", b.err
	}
	if err := b.flushRun(); err != nil {
		return "", err
	}
	if err := b.packW.Flush(); err != nil {
		return "", err
	}
	files := slices.Clone(b.files)
	var packOffset uint32
	var srcs []source
	if base != nil {
		files = append(files, base.files...)
		packOffset = uint32(base.l.packs)
		srcs = append(srcs, newDiskSource(base))
	}
	slices.SortFunc(files, func(x, y id.ID) int { return bytes.Compare(x[:], y[:]) })
	files = slices.Compact(files)
	for _, r := range append(slices.Clone(b.merged), b.runs...) {
		srcs = append(srcs, &offsetSource{newRunSource(r), packOffset})
	}
	out, err := os.CreateTemp(b.dir, "tmp-index-*")
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			_ = out.Close()           // failed already; the file goes
			_ = os.Remove(out.Name()) // best effort: tmp- files are cleared later
		}
	}()
	if err := b.write(out, srcs, base, files); err != nil {
		return "", err
	}
	if !b.noSync {
		if err := out.Sync(); err != nil {
			return "", err
		}
	}
	if err := out.Close(); err != nil {
		return "", err
	}
	path = filepath.Join(b.dir, DiskName(files))
	if err := os.Rename(out.Name(), path); err != nil {
		if _, serr := os.Stat(path); serr != nil {
			return "", err
		}
		// Another process wrote the same file and holds it open where
		// that forbids replacing it (Windows): it covers the same index
		// files, so use it.
		_ = os.Remove(out.Name()) // our copy of it; best effort
	}
	return path, nil
}

// write writes the whole file: records, pack table, first ids, covered
// files, and the header last.
func (b *DiskBuilder) write(out *os.File, srcs []source, base *Disk, files []id.ID) error {
	w := bufio.NewWriterSize(out, ioBuffer)
	if _, err := w.Write(make([]byte, blockSize)); err != nil {
		return err
	}
	recs := &blockWriter{w: w, sealer: b.sealer, per: recordsPerBlock, size: diskRecord}
	// The first id prefix of every block, for the table after the pack
	// ids: sized for every entry added (copies included), in mapped
	// memory given back as soon as it is written (9.5 MB at 100 M blobs;
	// grown by append, the heap would briefly hold twice that and keep
	// it until a collection).
	bound := b.added
	if base != nil {
		bound += base.l.entries
	}
	room := b.mem.alloc(int((bound/recordsPerBlock+1)*8 + 4))
	defer b.mem.free(&room[0])
	firsts := room[:0]
	recs.onFlush = func(items []byte) { firsts = append(firsts, items[:8]...) }
	var rec [diskRecord]byte
	// Copies of a blob come one after another, the first added first:
	// the blob's record is written when the next blob comes.
	var held entry
	holding := false
	writeHeld := func() error {
		encodeRecord(rec[:], &held)
		return recs.add(rec[:])
	}
	err := mergeSources(srcs, func(e *entry) error {
		if holding && e.id == held.id {
			if b.prefer != nil && b.prefer(e.pack, held.pack) {
				held = *e
			}
			return nil
		}
		if holding {
			if err := writeHeld(); err != nil {
				return err
			}
		}
		held, holding = *e, true
		return nil
	})
	if err == nil && holding {
		err = writeHeld()
	}
	if err == nil {
		err = recs.flush()
	}
	if err != nil {
		return err
	}
	packs := &blockWriter{w: w, sealer: b.sealer, per: packsPerBlock, size: 32}
	if err := b.writePacks(packs, base); err != nil {
		return err
	}
	firsts = binary.LittleEndian.AppendUint32(firsts, crc32.Checksum(firsts, castagnoli))
	if _, err := w.Write(firsts); err != nil {
		return err
	}
	cov := make([]byte, 0, len(files)*32+4)
	for _, f := range files {
		cov = append(cov, f[:]...)
	}
	cov = binary.LittleEndian.AppendUint32(cov, crc32.Checksum(cov, castagnoli))
	if _, err := w.Write(cov); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	l := layoutOf(recs.total, packs.total, uint64(len(files)), uint32(b.sealer.SealedSize(payloadSize)))
	_, err = out.WriteAt(l.header(), 0)
	return err
}

// writePacks writes the pack table: base's, then the builder's.
func (b *DiskBuilder) writePacks(bw *blockWriter, base *Disk) error {
	add := func(p id.ID) error { return bw.add(p[:]) }
	if base != nil {
		if err := base.EachPack(add); err != nil {
			return err
		}
	}
	if _, err := b.packs.Seek(0, io.SeekStart); err != nil {
		return err
	}
	r := bufio.NewReaderSize(b.packs, ioBuffer)
	var p id.ID
	for range b.npacks {
		if _, err := io.ReadFull(r, p[:]); err != nil {
			return err
		}
		if err := add(p); err != nil {
			return err
		}
	}
	return bw.flush()
}

// Close removes the build's temporary files and releases its memory.
func (b *DiskBuilder) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	removeAll(b.merged)
	removeAll(b.runs)
	b.merged, b.runs = nil, nil
	removeAll([]*os.File{b.packs})
	b.mem.freeAll()
	b.run = nil
	if b.err == nil {
		b.err = errors.New("index: disk builder closed")
	}
}

// removeAll closes and removes temporary files; failures leave litter
// that RemoveStale clears later.
func removeAll(fs []*os.File) {
	for _, f := range fs {
		_ = f.Close()           // temporary: nothing to keep
		_ = os.Remove(f.Name()) // see above
	}
}
