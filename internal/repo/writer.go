package repo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/index"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/store"
	"golang.org/x/sync/errgroup"
)

// A Repository only reads. Everything that writes to the store hangs off
// a Writer, and a Writer is made only from a lease (kopia's
// RepositoryWriter is the model): the engine cannot write without holding
// the lock the seed assigns to its operation, and the compiler says so
// (internal/engine/operation's TestWritesNeedAWriter builds code that
// tries). The writes the seed lets run with no lock have their own,
// deliberately named way in (unlocked.go).

// Writer writes to the repository under a lease, a shared lock or
// stronger: packs (NewSaver), index files, snapshots, and deletes of
// snapshot objects that a new one replaces (tag, rewrite). Every store
// request it makes, reads included, goes through the lease's fence
// (lock.Lock.Fence), so a holder that lost its lease writes nothing more.
// The embedded Repository is that fenced view, for the reads of the same
// work.
type Writer struct {
	*Repository
	// from is the repository the writer was made from (BindConfig updates
	// its config too).
	from  *Repository
	lease *lock.Lock
}

// Writer returns a writer on r under lease, a lock package lock acquired
// (shared or exclusive); ErrNoLease otherwise. It shares r's keys, index
// and cache.
func (r *Repository) Writer(lease *lock.Lock) (*Writer, error) {
	if err := requireLease(lease, false); err != nil {
		return nil, err
	}
	return &Writer{Repository: r.fencedBy(lease), from: r, lease: lease}, nil
}

// Lease returns the lease the writer writes under: its Check goes right
// before the writes that must not outlive it (a snapshot).
func (w *Writer) Lease() *lock.Lock { return w.lease }

// SaveSnapshot stores a snapshot and returns its id. A snapshot over
// MaxSnapshotSize is refused with ErrTooLarge.
func (w *Writer) SaveSnapshot(ctx context.Context, s *snapshot.Snapshot) (id.ID, error) {
	if err := checkSnapshotLists(s); err != nil {
		return id.ID{}, fmt.Errorf("saving snapshot: %w", err)
	}
	plain, err := snapshot.Encode(s)
	if err != nil {
		return id.ID{}, err
	}
	sid, err := w.saveSealed(ctx, SnapshotPrefix, plain)
	if err != nil {
		return id.ID{}, fmt.Errorf("saving snapshot: %w", err)
	}
	return sid, nil
}

// DeleteSnapshot removes one snapshot object that a new one replaced (tag
// and rewrite save the new object first).
func (w *Writer) DeleteSnapshot(ctx context.Context, sid id.ID) error {
	return w.deleteSnapshot(ctx, sid)
}

// deleteSnapshot removes one snapshot object.
func (r *Repository) deleteSnapshot(ctx context.Context, sid id.ID) error {
	if err := r.st.Delete(ctx, SnapshotKey(sid)); err != nil {
		return fmt.Errorf("deleting snapshot %s: %w", sid.Short(), err)
	}
	return nil
}

// WriteIndex stores index files naming packs (split so that no file names
// more than a few thousand packs or holds more than indexFileTarget bytes,
// see splitIndex) and returns their ids. It does not touch the in-memory
// index.
func (w *Writer) WriteIndex(ctx context.Context, packs []index.PackBlobs) ([]id.ID, error) {
	var ids []id.ID
	for _, file := range splitIndex(packs) {
		f := &index.File{Packs: file}
		fid, err := w.saveSealed(ctx, IndexPrefix, f.Encode())
		if err != nil {
			return ids, fmt.Errorf("storing index file: %w", err)
		}
		ids = append(ids, fid)
	}
	return ids, nil
}

// ExclusiveWriter is a Writer under the exclusive lock, which alone may
// delete what others read or deduplicate against (packs and index files),
// remove temp files, and rewrite the config.
type ExclusiveWriter struct {
	*Writer
}

// ExclusiveWriter returns a writer on r under lease, the exclusive lock;
// ErrNoLease without a lease, ErrSharedLease with a shared one.
func (r *Repository) ExclusiveWriter(lease *lock.Lock) (*ExclusiveWriter, error) {
	if err := requireLease(lease, true); err != nil {
		return nil, err
	}
	w, err := r.Writer(lease)
	if err != nil {
		return nil, err
	}
	return &ExclusiveWriter{Writer: w}, nil
}

// ErrNotSweepable: DeleteUnused was asked to delete something other than a
// pack or an index file.
var ErrNotSweepable = errors.New("only packs and index files can be swept")

// DeleteUnused deletes a pack or index file that prune (or repair index)
// found unused. It checks the lease right before the delete: a holder that
// lost its lease deletes nothing more. An object already gone is not an
// error.
func (w *ExclusiveWriter) DeleteUnused(ctx context.Context, obj ObjectEntry) error {
	return w.DeleteUnusedBatch(ctx, []ObjectEntry{obj}, 1, nil)
}

// DeleteUnusedBatch deletes packs or index files that prune found unused,
// up to parallel at once, after one lease check for the whole batch
// (instead of one per object: on S3 a check costs as much as a delete).
// The lease's fence still refuses every request once its safe end has
// passed; what a batch adds is that a lock broken by hand (break-lock)
// during the batch stops the deletes at the next batch, not the next
// object. done, when set, is called after each delete (from several
// goroutines). An object already gone is not an error.
func (w *ExclusiveWriter) DeleteUnusedBatch(ctx context.Context, objs []ObjectEntry, parallel int, done func(ObjectEntry)) error {
	for _, obj := range objs {
		if !strings.HasPrefix(obj.Key, DataPrefix) && !strings.HasPrefix(obj.Key, IndexPrefix) {
			return fmt.Errorf("%w: %s", ErrNotSweepable, obj.Key)
		}
	}
	if len(objs) == 0 {
		return nil
	}
	if err := w.lease.Check(ctx); err != nil {
		return fmt.Errorf("before deleting %s: %w", objs[0].Key, err)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(parallel, 1))
	for _, obj := range objs {
		g.Go(func() error {
			if err := w.st.Delete(gctx, obj.Key); err != nil && !errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("deleting %s: %w", obj.Key, err)
			}
			if done != nil {
				done(obj)
			}
			return nil
		})
	}
	return g.Wait()
}

// RemoveStaleTemp removes the temp files that writers which crashed
// between writing and renaming left before cutoff, on stores that leave
// them (store.TempCleaner; others have none), through the lease's fence
// like every other request. It returns how many it removed.
func (w *ExclusiveWriter) RemoveStaleTemp(ctx context.Context, cutoff time.Time) (int, error) {
	tc, ok := w.st.(store.TempCleaner)
	if !ok {
		return 0, nil
	}
	if err := w.lease.Check(ctx); err != nil {
		return 0, fmt.Errorf("before removing stale temp files: %w", err)
	}
	n, err := tc.RemoveStaleTemp(ctx, cutoff)
	if err != nil {
		return n, fmt.Errorf("removing stale temp files: %w", err)
	}
	return n, nil
}
