package repo

import (
	"context"
	"errors"

	"github.com/cloudstic/cloudstic/internal/repo/pack"
)

// Flush uploads the last partial pack, waits for every upload and writes
// the final index file. After Flush every saved blob is in the index.
// Flush and Abort must not run while a Save does.
func (s *Saver) Flush(ctx context.Context) error {
	return s.FlushWith(ctx, nil)
}

// FlushWith is Flush that also runs beside, when not nil, once every pack
// of the run is stored, at the same time as the final index file's write:
// a check that must come after the packs and before a write that needs
// the index file too (a backup's lease check before its snapshot) then
// costs no round trip of its own. beside does not run when a pack could
// not be stored (the packs stored are indexed, as by Flush, and the error
// returned); it runs alone when there is no index file left to write. The
// error is the index write's and beside's, joined: the caller writes
// nothing that needs both unless it is nil.
func (s *Saver) FlushWith(ctx context.Context, beside func(context.Context) error) error {
	if err := s.storeLast(ctx); err != nil {
		// What was stored is kept for the next run all the same.
		return errors.Join(err, s.indexStored(ctx))
	}
	s.idxMu.Lock()
	batch := s.unsynced
	s.unsynced = nil
	s.idxMu.Unlock()
	checked := make(chan error, 1)
	switch {
	case beside == nil:
		checked <- nil
	case len(batch) == 0:
		checked <- beside(ctx)
	default:
		go func() { checked <- beside(ctx) }()
	}
	var err error
	if len(batch) > 0 {
		if rest, ierr := s.writeIndex(ctx, batch); ierr != nil {
			s.requeue(rest)
			err = errors.Join(ierr, s.indexStored(ctx))
		}
	}
	if err == nil {
		// The blobs of this run leave the index's delta for its sorted part.
		s.r.idx.Merge()
	}
	return errors.Join(err, <-checked)
}

// storeLast uploads the last partial packs and waits for every upload: no
// pack is in flight when it returns. The error is the first upload's that
// failed, if any.
func (s *Saver) storeLast(ctx context.Context) error {
	s.mu.Lock()
	last := s.cur
	s.cur = [2]*pack.Builder{}
	s.mu.Unlock()
	var err error
	for t, b := range last {
		if b != nil && b.Count() > 0 && err == nil {
			err = s.send(ctx, upload{b: b, t: pack.BlobType(t)})
		}
	}
	s.stopUploaders()
	s.cancel()
	return errors.Join(err, s.err.get())
}
