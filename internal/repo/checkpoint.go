package repo

import (
	"context"
	"fmt"
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/repo/index"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
)

// Checkpoints. A Saver indexes the packs it stored as it goes, not only at
// Flush: an index file is an immutable, uniquely named object, which a
// shared lock may write, and once it is stored the blobs of its packs are
// reusable by the next run whatever becomes of this one (restic flushes
// index files the same way; kopia calls them checkpoints). So a backup
// interrupted by a crash (kill -9, a power cut) loses at most the packs
// stored since its last checkpoint, and one interrupted cleanly (Ctrl-C,
// SIGTERM, a store failure: see Interrupt) loses none of what it stored.
//
// The pace bounds both what a crash loses and the overhead: one small
// index file (about 50 bytes a blob) for every CheckpointPacks packs (256
// MiB of 16 MiB packs), and at most one a CheckpointAge on a slow link.
// Checkpoints come as packs are stored: a run storing nothing writes none.
const (
	// CheckpointPacks is the default number of stored packs that are
	// indexed together.
	CheckpointPacks = 16
	// CheckpointAge is the default longest time a stored pack waits for
	// its index file, counted when the next pack is stored.
	CheckpointAge = time.Minute
	// interruptTimeout bounds the last checkpoint of an interrupted run,
	// whose own context is done by then.
	interruptTimeout = time.Minute
)

// SaverOptions configure a Saver (see Writer.NewSaverWith).
type SaverOptions struct {
	// Uploaders is the number of concurrent pack uploads (at least 1).
	Uploaders int
	// Compression compresses data blobs; tree blobs always use zstd.
	Compression pack.Compression
	// CheckpointPacks and CheckpointAge, when positive, replace the
	// package's defaults: an index file is written once this many stored
	// packs are unindexed, or when a pack is stored and the oldest
	// unindexed one was stored this long ago.
	CheckpointPacks int
	CheckpointAge   time.Duration
	// Clock times the checkpoints (default clock.Real).
	Clock clock.Clock
}

// checkpoints is the pace of a Saver's index files.
type checkpoints struct {
	packs int
	age   time.Duration
	clock clock.Clock
}

func (o SaverOptions) checkpoints() checkpoints {
	c := checkpoints{packs: CheckpointPacks, age: CheckpointAge, clock: o.Clock}
	if o.CheckpointPacks > 0 {
		c.packs = o.CheckpointPacks
	}
	if o.CheckpointAge > 0 {
		c.age = o.CheckpointAge
	}
	if c.clock == nil {
		c.clock = clock.Real{}
	}
	return c
}

// stored records a pack the store holds and returns the packs to index
// now, if a checkpoint is due.
func (s *Saver) stored(p index.PackBlobs) []index.PackBlobs {
	now := s.ckpt.clock.Mono()
	s.idxMu.Lock()
	defer s.idxMu.Unlock()
	if len(s.unsynced) == 0 {
		s.since = now
	}
	s.unsynced = append(s.unsynced, p)
	if len(s.unsynced) < s.ckpt.packs && now-s.since < s.ckpt.age {
		return nil
	}
	batch := s.unsynced
	s.unsynced = nil
	return batch
}

// checkpoint indexes batch; packs it could not index wait for the next
// checkpoint (or the last, see Interrupt).
func (s *Saver) checkpoint(ctx context.Context, batch []index.PackBlobs) error {
	rest, err := s.writeIndex(ctx, batch)
	if err != nil {
		s.requeue(rest)
	}
	return err
}

// requeue puts back packs whose index file was not stored.
func (s *Saver) requeue(packs []index.PackBlobs) {
	if len(packs) == 0 {
		return
	}
	s.idxMu.Lock()
	defer s.idxMu.Unlock()
	if len(s.unsynced) == 0 {
		s.since = s.ckpt.clock.Mono()
	}
	s.unsynced = append(s.unsynced, packs...)
}

// Interrupt ends a run that failed or was cancelled. Like Abort it drops
// the packs being filled and cancels the uploads in flight; then it indexes
// every pack already stored (the last checkpoint), so that the next run
// reuses them instead of uploading them again. Call it before the lease is
// released: the index files go through the writer's fence, and a holder
// that lost its lease writes none. ctx is the run's, usually done by then
// (Ctrl-C cancels it): the index files are written with its values but
// not its cancellation, for at most a minute. A pack whose index file
// could not be stored is left unindexed, for prune. Interrupt after Flush
// does nothing more.
func (s *Saver) Interrupt(ctx context.Context) error {
	s.Abort()
	return s.indexStored(ctx)
}

// indexStored indexes the stored packs no index file names yet, once the
// uploaders have stopped, with ctx's values but not its cancellation.
func (s *Saver) indexStored(ctx context.Context) error {
	s.idxMu.Lock()
	batch := s.unsynced
	s.unsynced = nil
	s.idxMu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), interruptTimeout)
	defer cancel()
	if _, err := s.writeIndex(ctx, batch); err != nil {
		return fmt.Errorf("indexing the %d packs stored before the interruption: %w", len(batch), err)
	}
	return nil
}
