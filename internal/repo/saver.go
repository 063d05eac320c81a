package repo

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/index"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/store"
)

// SaverStats count what a Saver stored.
type SaverStats struct {
	BlobsAdded  int64
	BytesAdded  int64 // sealed bytes of new blobs
	PacksStored int64
	IndexFiles  int64
}

// upload is a finished pack on its way to an uploader.
type upload struct {
	b *pack.Builder
	t pack.BlobType // data packs give their buffer back (giveBuffer)
}

// Saver bundles new blobs into packs and uploads them in the background.
// Tree blobs and data blobs go to separate packs, so that reading the
// trees of a snapshot touches few packs and a metadata cache stays small.
// Save is safe for concurrent use; call Flush once at the end. A blob
// becomes visible in the repository's index only after its pack and an
// index file naming it are stored.
type Saver struct {
	r       *Repository
	ctx     context.Context
	cancel  context.CancelFunc
	mu      sync.Mutex
	cur     [2]*pack.Builder // by blob type: trees and data go to separate packs
	pending map[id.ID]bool   // saved in this run, not yet indexed
	uploads chan upload
	// dataComp compresses data blobs; tree blobs always use zstd (JSON,
	// few bytes, compressed best by it).
	dataComp pack.Compression
	closeUp  sync.Once
	wg       sync.WaitGroup
	err      onceErr

	// sealed recycles the per-blob sealed buffers (copied into a pack
	// builder right away). packSlots holds one token per data pack buffer
	// in use, freeBufs the allocated ones not in use (see takeBuffer),
	// packMem their memory.
	sealed    *pack.Buffers
	packSlots chan struct{}
	bufMu     sync.Mutex
	freeBufs  [][]byte
	packMem   packMemory

	idxMu    sync.Mutex
	unsynced []index.PackBlobs // uploaded packs not yet in an index file
	// since is when the oldest pack of unsynced was stored (clock.Mono).
	since time.Duration
	ckpt  checkpoints
	stats struct{ blobs, bytes, packs, files atomic.Int64 }
}

// NewSaver starts uploaders goroutines (at least 1) that store full packs,
// through the writer's fence; data blobs are compressed as dataComp says.
// Checkpoints come at the default pace (CheckpointPacks, CheckpointAge).
func (w *Writer) NewSaver(ctx context.Context, uploaders int, dataComp pack.Compression) *Saver {
	return w.NewSaverWith(ctx, SaverOptions{Uploaders: uploaders, Compression: dataComp})
}

// NewSaverWith is NewSaver with every option.
func (w *Writer) NewSaverWith(ctx context.Context, o SaverOptions) *Saver {
	r := w.Repository
	ctx, cancel := context.WithCancel(ctx)
	uploaders := max(o.Uploaders, 1)
	// Data packs in memory at once: one per uploader and one being filled
	// (uploads is unbuffered: a full pack waits in its sender until an
	// uploader is free).
	s := &Saver{r: r, ctx: ctx, cancel: cancel, pending: make(map[id.ID]bool), dataComp: o.Compression,
		uploads: make(chan upload), packSlots: make(chan struct{}, uploaders+1),
		sealed: pack.NewBuffers(runtime.GOMAXPROCS(0)), ckpt: o.checkpoints()}
	for i := 0; i < uploaders; i++ {
		s.wg.Add(1)
		go s.uploader()
	}
	return s
}

// Known reports whether the blob is already stored or being saved. A
// rebuild of a damaged on-disk index it starts runs under the saver's
// ctx (NewSaver's).
func (s *Saver) Known(blob id.ID) bool {
	if s.r.idx.Has(s.ctx, blob) {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pending[blob]
}

// Save stores data as a blob with the given id unless it is known. It
// reports whether the blob was new. The caller computed blob with
// Repository.Key().ID(data).
func (s *Saver) Save(ctx context.Context, t pack.BlobType, blob id.ID, data []byte) (bool, error) {
	if err := s.err.get(); err != nil {
		return false, err
	}
	// Unknown only if truly so: an on-disk index that could not be
	// read fails the backup rather than store its blobs again.
	if known, err := s.r.idx.Contains(ctx, blob); err != nil || known {
		return false, err
	}
	s.mu.Lock()
	if s.pending[blob] {
		s.mu.Unlock()
		return false, nil
	}
	s.pending[blob] = true
	s.mu.Unlock()

	// Compression and encryption run outside the lock, in the caller's
	// goroutine, so they use every core the callers use.
	comp := pack.Zstd
	if t == pack.DataBlob {
		comp = s.dataComp
	}
	sealed, err := s.r.codec.AppendEncode(s.sealed.Get(0), data, comp)
	if err != nil {
		return false, err
	}
	s.stats.blobs.Add(1)
	s.stats.bytes.Add(int64(len(sealed)))

	err = s.add(ctx, t, blob, sealed, len(data)) // copies sealed
	s.sealed.Put(sealed)
	return true, err
}

// add appends a sealed blob to the open pack of its type, sending packs
// that are full to the uploaders. A pack ends before the blob that would
// take it past PackSize, header included, so a data pack buffer, which
// holds PackSize, never outgrows it (appending to a full 16 MiB slice would
// double it); only a blob larger than a whole pack gets a pack of its own.
// A pack also ends at pack.MaxEntries blobs, the most a reader accepts.
func (s *Saver) add(ctx context.Context, t pack.BlobType, blob id.ID, sealed []byte, plainLen int) error {
	for {
		s.mu.Lock()
		cur := &s.cur[t&1]
		if *cur != nil && (*cur).Count() > 0 &&
			((*cur).FinishedSize(len(sealed)) > s.r.cfg.PackSize || (*cur).Count() >= pack.MaxEntries) {
			full := upload{b: *cur, t: t}
			*cur = nil
			s.mu.Unlock()
			if err := s.send(ctx, full); err != nil {
				return err
			}
			continue
		}
		if *cur == nil && t == pack.DataBlob {
			// Wait for a data pack buffer outside the lock: Known and
			// the other blob type's packs must not wait with us.
			s.mu.Unlock()
			buf, err := s.takeBuffer(ctx)
			if err != nil {
				return err
			}
			s.mu.Lock()
			if *cur == nil {
				*cur = pack.NewBuilderBuffer(buf)
			} else {
				s.giveBuffer(buf) // another blob worker was quicker
			}
			s.mu.Unlock()
			continue
		}
		if *cur == nil {
			// Tree packs start small: trees are few and small, and a 16
			// MiB buffer per tree pack showed up in the heap profile.
			*cur = pack.NewBuilder(64 << 10)
		}
		(*cur).Add(t, blob, sealed, plainLen)
		var full *upload
		if (*cur).FinishedSize(0) >= s.r.cfg.PackSize {
			full = &upload{b: *cur, t: t}
			*cur = nil
		}
		s.mu.Unlock()
		if full != nil {
			return s.send(ctx, *full)
		}
		return nil
	}
}

// takeBuffer waits until fewer than uploaders+1 data pack buffers are in
// use, so a backup holds at most that many data packs in memory however far
// ahead of the store it gets. The buffer given back last is reused first: a
// backup whose uploads keep up (small files, a local disk) allocates two
// buffers, not all of them. A new buffer holds a whole pack, outside the
// Go heap (packMemory).
func (s *Saver) takeBuffer(ctx context.Context) ([]byte, error) {
	select {
	case s.packSlots <- struct{}{}:
		s.bufMu.Lock()
		defer s.bufMu.Unlock()
		if n := len(s.freeBufs); n > 0 {
			buf := s.freeBufs[n-1]
			s.freeBufs = s.freeBufs[:n-1]
			return buf[:0], nil
		}
		return s.packMem.alloc(s.r.cfg.PackSize), nil
	case <-s.ctx.Done():
		return nil, s.stopped()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// giveBuffer ends the use of a data pack buffer taken by takeBuffer; buf is
// kept for reuse unless it is nil.
func (s *Saver) giveBuffer(buf []byte) {
	if buf != nil {
		s.bufMu.Lock()
		s.freeBufs = append(s.freeBufs, buf)
		s.bufMu.Unlock()
	}
	<-s.packSlots
}

// send hands a full pack to an uploader. A data pack that cannot be sent
// ends its buffer's use (the buffer itself is dropped).
func (s *Saver) send(ctx context.Context, u upload) error {
	var err error
	select {
	case s.uploads <- u:
		return nil
	case <-s.ctx.Done():
		err = s.stopped()
	case <-ctx.Done():
		err = ctx.Err()
	}
	if u.t == pack.DataBlob {
		s.giveBuffer(nil)
	}
	return err
}

// stopped is why the saver's own context ended: the upload error that
// cancelled it, if any.
func (s *Saver) stopped() error {
	if err := s.err.get(); err != nil {
		return err
	}
	return s.ctx.Err()
}

func (s *Saver) uploader() {
	defer s.wg.Done()
	for u := range s.uploads {
		var err error
		if s.err.get() == nil {
			err = s.upload(u.b)
		}
		if u.t == pack.DataBlob {
			// The buffer goes back even after a failure: a blob worker
			// may be waiting for it (and then sees the error).
			s.giveBuffer(u.b.Buffer())
		}
		if err != nil {
			s.err.set(err)
			s.cancel()
		}
	}
}

func (s *Saver) upload(b *pack.Builder) error {
	data, packID, entries, err := b.Finish(s.r.key)
	if err != nil {
		return err
	}
	var opts store.PutOptions
	if s.r.st.Capabilities().CreateIfAbsent {
		opts.IfAbsent = true
	}
	if _, err := s.r.st.Put(s.ctx, PackKey(packID), data, opts); err != nil && !errors.Is(err, store.ErrExists) {
		return fmt.Errorf("storing pack %s: %w", packID.Short(), err)
	}
	s.stats.packs.Add(1)
	if batch := s.stored(index.PackBlobs{ID: packID, Blobs: entries}); batch != nil {
		return s.checkpoint(s.ctx, batch)
	}
	return nil
}

// writeIndex stores index files for packs (one, unless they name more
// blobs than one file holds: see splitIndex) and only then makes the blobs
// of each file's packs visible in the in-memory index. On a failure it
// returns the packs no stored index file names.
func (s *Saver) writeIndex(ctx context.Context, packs []index.PackBlobs) ([]index.PackBlobs, error) {
	files := splitIndex(packs)
	for i, file := range files {
		f := &index.File{Packs: file}
		if _, err := s.r.saveSealed(ctx, IndexPrefix, f.Encode()); err != nil {
			return slices.Concat(files[i:]...), fmt.Errorf("storing index file: %w", err)
		}
		s.stats.files.Add(1)
		for _, p := range file {
			s.r.idx.Add(p.ID, p.Blobs)
		}
		s.mu.Lock()
		for _, p := range file {
			for _, e := range p.Blobs {
				delete(s.pending, e.ID)
			}
		}
		s.mu.Unlock()
	}
	return nil, nil
}

// Abort stops the uploaders without storing anything more. Safe to call
// after Flush.
func (s *Saver) Abort() {
	s.err.set(errors.New("saver aborted"))
	s.cancel()
	s.mu.Lock()
	s.cur = [2]*pack.Builder{}
	s.mu.Unlock()
	s.stopUploaders()
}

// stopUploaders waits for the uploads in flight and then frees the data
// pack buffers: no pack is being filled or uploaded any more.
func (s *Saver) stopUploaders() {
	s.closeUp.Do(func() { close(s.uploads) })
	s.wg.Wait()
	s.bufMu.Lock()
	s.freeBufs = nil
	s.bufMu.Unlock()
	s.packMem.free()
}

// Stats returns what was stored so far.
func (s *Saver) Stats() SaverStats {
	return SaverStats{BlobsAdded: s.stats.blobs.Load(), BytesAdded: s.stats.bytes.Load(),
		PacksStored: s.stats.packs.Load(), IndexFiles: s.stats.files.Load()}
}
