package repo

import (
	"context"
	"errors"
	"os"

	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/index"
)

// A damaged on-disk index (a block that fails its checksum or does not
// open, a file truncated or unreadable since it was opened) is found by
// the lookup that reads the damage, past the checks of opening it. The
// file is derived: the index (index.Rebuild) then hands it to
// rebuildDiskIndex, which discards it and writes it anew from the
// repository's index files, or reads those into memory when the
// directory cannot serve, and the lookup is retried. So the damage never
// passes for blobs the repository lacks, and the next run finds a good
// file. Only a failure to read the index files themselves fails the
// command, with an error naming the local file.

// rebuildDiskIndex returns the index.Rebuild of the on-disk index. It
// runs under the ctx of the lookup that met the damage (a backup loads
// its index under a context that ends once it is loaded, so not under
// LoadIndex's), and stops when that ends: an interrupted command does
// not wait minutes for it. Stopped, it leaves no file (the damaged one
// is removed first, the new one is renamed into place only once
// complete), and the next lookup, or the next run, writes it anew. It
// reads no more than the index files the damaged file covered.
func (r *Repository) rebuildDiskIndex() index.Rebuild {
	return func(ctx context.Context, damaged *index.Disk, add func(index.PackBlobs)) (*index.Disk, error) {
		files := damaged.Files()
		// Closed first: where the system refuses to replace an open
		// file (Windows), the new one takes the same name. Best effort:
		// the file is read-only, and a later run (pickDiskIndex) removes
		// one that stays.
		_ = damaged.Close()
		_ = os.Remove(damaged.Path())
		d, _, err := r.writeDiskIndex(ctx, nil, files)
		if err == nil {
			return d, nil
		}
		if !errors.Is(err, errIndexDir) {
			return nil, err
		}
		// The directory cannot serve (full, read-only...): it only
		// saves memory.
		_, err = r.readIndexFiles(ctx, files, 8, func(p index.PackBlobs) error {
			add(p)
			return nil
		}, func(id.ID) {})
		return nil, err
	}
}
