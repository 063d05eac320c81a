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
	var sp indexSplitter
	start := 0
	for i, p := range packs {
		if sp.add(len(p.Blobs)) {
			files = append(files, packs[start:i])
			start = i
		}
	}
	if start < len(packs) {
		files = append(files, packs[start:])
	}
	return files
}

// indexSplitter is splitIndex's rule, one pack at a time.
type indexSplitter struct {
	packs, size int
}

// add adds a pack of blobs blobs and reports whether it starts a new file
// (never the first pack's).
func (s *indexSplitter) add(blobs int) bool {
	n := index.PackRecordLen(blobs)
	next := s.packs > 0 && (s.size+n > indexFileTarget || s.packs == maxPacksPerIndexFile)
	if next || s.packs == 0 {
		s.packs, s.size = 0, index.HeaderLen
	}
	s.size += n
	s.packs++
	return next
}

// IndexFileCount counts the index files that calls of WriteIndex would
// write for packs given one at a time, in the calls' order (EndCall
// between two calls): prune's test of whether merging the index files
// would leave fewer of them.
type IndexFileCount struct {
	sp    indexSplitter
	files int
}

// Add counts a pack of blobs blobs.
func (c *IndexFileCount) Add(blobs int) {
	first := c.sp.packs == 0
	if c.sp.add(blobs) || first {
		c.files++
	}
}

// EndCall ends a call of WriteIndex: the next pack starts a file.
func (c *IndexFileCount) EndCall() { c.sp = indexSplitter{} }

// Files is the number of files counted.
func (c *IndexFileCount) Files() int { return c.files }
