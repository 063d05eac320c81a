package repo

import (
	"context"
	"fmt"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/index"
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

// maxPacksPerIndexFile bounds one index file written by WriteIndex.
const maxPacksPerIndexFile = 4096

// WriteIndex stores index files naming packs (split so that no file names
// more than a few thousand packs) and returns their ids. It does not touch
// the in-memory index.
func (r *Repository) WriteIndex(ctx context.Context, packs []index.PackBlobs) ([]id.ID, error) {
	var ids []id.ID
	for start := 0; start < len(packs); start += maxPacksPerIndexFile {
		end := min(start+maxPacksPerIndexFile, len(packs))
		f := &index.File{Packs: packs[start:end]}
		fid, err := r.saveSealed(ctx, IndexPrefix, f.Encode())
		if err != nil {
			return ids, fmt.Errorf("storing index file: %w", err)
		}
		ids = append(ids, fid)
	}
	return ids, nil
}
