package repo

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/index"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/store"
)

// indexEvery is how many uploaded packs go into one index file while a long
// backup runs, so that a crash loses the index of at most this many packs.
const indexEvery = 64

// SaverStats count what a Saver stored.
type SaverStats struct {
	BlobsAdded  int64
	BytesAdded  int64 // sealed bytes of new blobs
	PacksStored int64
	IndexFiles  int64
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
	uploads chan *pack.Builder
	closeUp sync.Once
	wg      sync.WaitGroup
	err     onceErr

	// sealed recycles the per-blob sealed buffers (copied into a pack
	// builder right away); packBufs hands uploaded packs' memory to the
	// next data pack builder.
	sealed   sync.Pool
	packBufs chan []byte

	idxMu    sync.Mutex
	unsynced []index.PackBlobs // uploaded packs not yet in an index file
	stats    struct{ blobs, bytes, packs, files atomic.Int64 }
}

// NewSaver starts uploaders goroutines (at least 1) that store full packs.
func (r *Repository) NewSaver(ctx context.Context, uploaders int) *Saver {
	ctx, cancel := context.WithCancel(ctx)
	s := &Saver{r: r, ctx: ctx, cancel: cancel, pending: make(map[id.ID]bool),
		uploads: make(chan *pack.Builder, 1), packBufs: make(chan []byte, 2)}
	if uploaders < 1 {
		uploaders = 1
	}
	for i := 0; i < uploaders; i++ {
		s.wg.Add(1)
		go s.uploader()
	}
	return s
}

// Known reports whether the blob is already stored or being saved.
func (s *Saver) Known(blob id.ID) bool {
	if s.r.idx.Has(blob) {
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
	if s.r.idx.Has(blob) {
		return false, nil
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
	var buf []byte
	if p, ok := s.sealed.Get().(*[]byte); ok {
		buf = (*p)[:0]
	}
	sealed, err := s.r.codec.AppendEncode(buf, data)
	if err != nil {
		return false, err
	}
	s.stats.blobs.Add(1)
	s.stats.bytes.Add(int64(len(sealed)))

	s.mu.Lock()
	cur := &s.cur[t&1]
	if *cur == nil {
		*cur = s.newBuilder(t)
	}
	(*cur).Add(t, blob, sealed) // copies sealed
	var full *pack.Builder
	if (*cur).Size() >= s.r.cfg.PackSize {
		full, *cur = *cur, nil
	}
	s.mu.Unlock()
	s.sealed.Put(&sealed)
	if full != nil {
		return true, s.send(ctx, full)
	}
	return true, nil
}

// newBuilder starts a pack: data packs reuse an uploaded pack's memory when
// one is free; tree packs start small (trees are few and small, and a
// 20 MiB buffer per tree pack showed up in the heap profile).
func (s *Saver) newBuilder(t pack.BlobType) *pack.Builder {
	if t == pack.TreeBlob {
		return pack.NewBuilder(64 << 10)
	}
	select {
	case buf := <-s.packBufs:
		return pack.NewBuilderBuffer(buf)
	default:
		return pack.NewBuilder(s.r.cfg.PackSize + s.r.cfg.PackSize/4)
	}
}

func (s *Saver) send(ctx context.Context, b *pack.Builder) error {
	select {
	case s.uploads <- b:
		return nil
	case <-s.ctx.Done():
		if err := s.err.get(); err != nil {
			return err
		}
		return s.ctx.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Saver) uploader() {
	defer s.wg.Done()
	for b := range s.uploads {
		if s.err.get() != nil {
			continue // drain
		}
		if err := s.upload(b); err != nil {
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
	if cap(data) >= s.r.cfg.PackSize {
		select { // the store is done with data: recycle it
		case s.packBufs <- data[:0]:
		default:
		}
	}
	s.stats.packs.Add(1)
	s.idxMu.Lock()
	s.unsynced = append(s.unsynced, index.PackBlobs{ID: packID, Blobs: entries})
	var batch []index.PackBlobs
	if len(s.unsynced) >= indexEvery {
		batch, s.unsynced = s.unsynced, nil
	}
	s.idxMu.Unlock()
	if batch != nil {
		return s.writeIndex(s.ctx, batch)
	}
	return nil
}

// writeIndex stores an index file for packs and only then makes their
// blobs visible in the in-memory index.
func (s *Saver) writeIndex(ctx context.Context, packs []index.PackBlobs) error {
	f := &index.File{Packs: packs}
	if _, err := s.r.saveSealed(ctx, IndexPrefix, f.Encode()); err != nil {
		return fmt.Errorf("storing index file: %w", err)
	}
	s.stats.files.Add(1)
	for _, p := range packs {
		s.r.idx.Add(p.ID, p.Blobs)
	}
	s.mu.Lock()
	for _, p := range packs {
		for _, e := range p.Blobs {
			delete(s.pending, e.ID)
		}
	}
	s.mu.Unlock()
	return nil
}

// Flush uploads the last partial pack, waits for every upload and writes
// the final index file. After Flush every saved blob is in the index.
func (s *Saver) Flush(ctx context.Context) error {
	s.mu.Lock()
	last := s.cur
	s.cur = [2]*pack.Builder{}
	s.mu.Unlock()
	var err error
	for _, b := range last {
		if b != nil && b.Count() > 0 && err == nil {
			err = s.send(ctx, b)
		}
	}
	s.stopUploaders()
	s.cancel()
	if err := errors.Join(err, s.err.get()); err != nil {
		return err
	}
	s.idxMu.Lock()
	batch := s.unsynced
	s.unsynced = nil
	s.idxMu.Unlock()
	if len(batch) > 0 {
		return s.writeIndex(ctx, batch)
	}
	return nil
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

func (s *Saver) stopUploaders() {
	s.closeUp.Do(func() { close(s.uploads) })
	s.wg.Wait()
}

// Stats returns what was stored so far.
func (s *Saver) Stats() SaverStats {
	return SaverStats{BlobsAdded: s.stats.blobs.Load(), BytesAdded: s.stats.bytes.Load(),
		PacksStored: s.stats.packs.Load(), IndexFiles: s.stats.files.Load()}
}
