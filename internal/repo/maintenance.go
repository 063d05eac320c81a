package repo

import (
	"context"
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

// maxPacksPerIndexFile bounds the packs one index file names.
const maxPacksPerIndexFile = 4096

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
