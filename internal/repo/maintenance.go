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
	"github.com/cloudstic/cloudstic/internal/store"
)

// ObjectEntry is a listed object named by an id: a pack, index file or
// snapshot, with its size and the store's modification time.
type ObjectEntry struct {
	ID   id.ID
	Key  string
	Size int64
	// ModTime is the store's time of the write (zero when it cannot tell).
	ModTime time.Time
}

// ListObjects lists every object under prefix whose name is an id, with
// size and modification time; keys that are not ids are returned in bad.
func (r *Repository) ListObjects(ctx context.Context, prefix string) (objs []ObjectEntry, bad []string, err error) {
	err = r.st.List(ctx, prefix, func(oi store.ObjectInfo) error {
		i, perr := IDFromKey(oi.Key)
		if perr != nil {
			bad = append(bad, oi.Key)
			return nil
		}
		objs = append(objs, ObjectEntry{ID: i, Key: oi.Key, Size: oi.Size, ModTime: oi.ModTime})
		return nil
	})
	return objs, bad, err
}

// DeleteSnapshot removes one snapshot object (the only write of forget).
func (r *Repository) DeleteSnapshot(ctx context.Context, sid id.ID) error {
	if err := r.st.Delete(ctx, SnapshotKey(sid)); err != nil {
		return fmt.Errorf("deleting snapshot %s: %w", sid.Short(), err)
	}
	return nil
}

// ErrNotSweepable: DeleteUnused was asked to delete something other than a
// pack or an index file.
var ErrNotSweepable = errors.New("only packs and index files can be swept")

// DeleteUnused deletes a pack or index file that prune found unused. It
// runs only under the exclusive lock, and checks the lease right before
// the delete: a holder that lost its lease deletes nothing more. An object
// already gone is not an error.
func (r *Repository) DeleteUnused(ctx context.Context, lease *lock.Lock, obj ObjectEntry) error {
	if err := RequireLease(lease, true); err != nil {
		return err
	}
	if !strings.HasPrefix(obj.Key, DataPrefix) && !strings.HasPrefix(obj.Key, IndexPrefix) {
		return fmt.Errorf("%w: %s", ErrNotSweepable, obj.Key)
	}
	if err := lease.Check(ctx); err != nil {
		return fmt.Errorf("before deleting %s: %w", obj.Key, err)
	}
	if err := r.st.Delete(ctx, obj.Key); err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("deleting %s: %w", obj.Key, err)
	}
	return nil
}

// RemoveStaleTemp removes the temp files that writers which crashed
// between writing and renaming left before cutoff, on stores that leave
// them (store.TempCleaner; others have none), under the exclusive lock.
// It returns how many it removed.
func (r *Repository) RemoveStaleTemp(ctx context.Context, lease *lock.Lock, cutoff time.Time) (int, error) {
	if err := RequireLease(lease, true); err != nil {
		return 0, err
	}
	tc, ok := r.store().(store.TempCleaner)
	if !ok {
		return 0, nil
	}
	if err := lease.Check(ctx); err != nil {
		return 0, fmt.Errorf("before removing stale temp files: %w", err)
	}
	n, err := tc.RemoveStaleTemp(ctx, cutoff)
	if err != nil {
		return n, fmt.Errorf("removing stale temp files: %w", err)
	}
	return n, nil
}

// maxPacksPerIndexFile bounds the packs one index file names.
const maxPacksPerIndexFile = 4096

// WriteIndex stores index files naming packs (split so that no file names
// more than a few thousand packs or holds more than indexFileTarget bytes,
// see splitIndex) and returns their ids. It does not touch the in-memory
// index.
func (r *Repository) WriteIndex(ctx context.Context, packs []index.PackBlobs) ([]id.ID, error) {
	var ids []id.ID
	for _, file := range splitIndex(packs) {
		f := &index.File{Packs: file}
		fid, err := r.saveSealed(ctx, IndexPrefix, f.Encode())
		if err != nil {
			return ids, fmt.Errorf("storing index file: %w", err)
		}
		ids = append(ids, fid)
	}
	return ids, nil
}

// splitIndex groups packs, in order, into the contents of index files of
// at most maxPacksPerIndexFile packs and indexFileTarget bytes each; a pack
// whose record alone is larger (more than 370,000 blobs) gets a file of its
// own, which still fits MaxIndexFileSize (see indexFileTarget).
func splitIndex(packs []index.PackBlobs) [][]index.PackBlobs {
	var files [][]index.PackBlobs
	start, size := 0, index.HeaderLen
	for i, p := range packs {
		n := p.EncodedLen()
		if i > start && (size+n > indexFileTarget || i-start == maxPacksPerIndexFile) {
			files = append(files, packs[start:i])
			start, size = i, index.HeaderLen
		}
		size += n
	}
	if start < len(packs) {
		files = append(files, packs[start:])
	}
	return files
}
