package repo

import (
	"errors"
	"fmt"

	"github.com/cloudstic/cloudstic/internal/repo/crypt"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
)

// Read bounds. Every object is read from the store with the largest size an
// object of its kind may have (store.Store.Get's max): a store writer
// without the key can make a read fail, but not make us allocate more than
// that, nor wait on a FIFO or read a device forever. Writers never make an
// object over its bound. docs/format.md, "Read bounds", lists them all;
// those of other packages are crypt.MaxSlotSize (key slots) and
// lock.MaxPayload (lock objects).
const (
	// MaxConfigSize bounds the config object (ours: a few hundred bytes
	// of JSON).
	MaxConfigSize = 64 << 10
	// MaxMetadataSize bounds a snapshot or an index file as stored. Both
	// are sealed like a blob, and the decoder refuses to decompress one
	// to more than pack.MaxBlobSize bytes, so no larger object was ever
	// readable: the bound is that plaintext, plus the encoding byte and
	// the seal. Writers refuse a plaintext over pack.MaxBlobSize
	// (saveSealed), so whatever they write fits, compressed or not.
	MaxMetadataSize = pack.MaxBlobSize + 1 + crypt.Overhead
	// MaxSnapshotSize bounds a snapshot object: MaxMetadataSize. A
	// snapshot is a few hundred bytes plus its lists (paths, tags,
	// exclude patterns); a backup whose snapshot would be larger (about a
	// million -files-from paths) is refused before it reads any file.
	MaxSnapshotSize = MaxMetadataSize
	// MaxIndexFileSize bounds an index file: MaxMetadataSize. Writers
	// split index files at indexFileTarget bytes of plaintext, far below.
	MaxIndexFileSize = MaxMetadataSize
)

// indexFileTarget is the plaintext size at which writers start a new index
// file (45 bytes per blob: some 370,000 blobs). One pack's record is at
// most pack.MaxEntries blobs (45 MiB), so every file fits MaxIndexFileSize.
const indexFileTarget = 16 << 20

// ErrTooLarge means an object to be stored would be larger than its read
// bound, and so unreadable: it is not written.
var ErrTooLarge = errors.New("object would be larger than the repository format allows")

// checkMetadataSize refuses the plaintext of a snapshot or an index file
// (under prefix) of n bytes when it is over pack.MaxBlobSize, the most a
// reader decodes (see MaxMetadataSize).
func checkMetadataSize(prefix string, n int) error {
	if n > pack.MaxBlobSize {
		return fmt.Errorf("%w: an object under %s of %d bytes, over %d", ErrTooLarge, prefix, n, pack.MaxBlobSize)
	}
	return nil
}

// CheckSnapshotSize refuses a snapshot whose stored form would be over
// MaxSnapshotSize. A backup calls it with the snapshot as known before it
// reads any file (its paths, tags and excludes): a snapshot that cannot be
// stored is refused before the work, not after it.
func CheckSnapshotSize(s *snapshot.Snapshot) error {
	if err := checkSnapshotLists(s); err != nil {
		return err
	}
	plain, err := snapshot.Encode(s)
	if err != nil {
		return err
	}
	return checkSnapshotPlain(s, len(plain))
}

// checkSnapshotLists refuses a snapshot whose lists alone hold more bytes
// than a snapshot may, without encoding it.
func checkSnapshotLists(s *snapshot.Snapshot) error {
	n := 0
	lists := [][]string{s.Paths, s.Tags}
	if s.Excludes != nil {
		lists = append(lists, s.Excludes.Patterns, s.Excludes.IfPresent)
	}
	for _, list := range lists {
		for _, str := range list {
			n += len(str)
		}
	}
	if n > pack.MaxBlobSize {
		return checkSnapshotPlain(s, n)
	}
	return nil
}

// checkSnapshotPlain refuses a snapshot whose plaintext is n bytes when
// that is over pack.MaxBlobSize (see MaxSnapshotSize).
func checkSnapshotPlain(s *snapshot.Snapshot, n int) error {
	if n > pack.MaxBlobSize {
		return fmt.Errorf("%w: the snapshot would be over %d bytes (%d paths, %d tags), more than the %d a snapshot may be",
			ErrTooLarge, n, len(s.Paths), len(s.Tags), pack.MaxBlobSize)
	}
	return nil
}
