package operation_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/engine/restore"
	"github.com/cloudstic/cloudstic/internal/store"
)

// afterIndexList is a store that runs hook once, right after the first
// listing of the index files has answered: another host's backup ending
// at that moment.
type afterIndexList struct {
	store.Store
	once sync.Once
	hook func()
}

func (s *afterIndexList) List(ctx context.Context, prefix string, fn func(store.ObjectInfo) error) error {
	err := s.Store.List(ctx, prefix, fn)
	if strings.HasPrefix(prefix, "index/packs") {
		s.once.Do(s.hook)
	}
	return err
}

// TestReaderBesideBackup: a reader (restore "latest", ls, find...) lists
// the snapshots before the index files. A backup writes its index files
// before its snapshot, so every snapshot listed then has its index files
// in the listing that follows; in the other order a backup ending between
// the two listings is listed without its index, and its restore fails
// with blobs missing. (A backup lists the two at once: a parent snapshot
// whose trees it cannot read costs it reading the files again, with a
// warning, never the backup.)
func TestReaderBesideBackup(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	checktest.NewRepo(t, dir)
	src := t.TempDir()
	checktest.WriteFile(t, src, "first", 1, 64<<10)
	backupOnce := func() {
		r := openRepo(t, dir)
		defer r.Close() //nolint:errcheck // local store: nothing to flush
		if _, err := operation.Backup(ctx, r, backup.Options{Path: src}, nil); err != nil {
			t.Error(err)
		}
	}
	backupOnce()

	o := options(dir)
	hooked := &afterIndexList{hook: func() {
		checktest.WriteFile(t, src, "second", 2, 64<<10)
		backupOnce()
	}}
	o.Store.TestWrapper = func(st store.Store) store.Store { hooked.Store = st; return hooked }
	r, err := operation.Open(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close() //nolint:errcheck // local store: nothing to flush
	res, err := operation.Restore(ctx, r, "latest", restore.Options{Output: t.TempDir()}, nil)
	if err != nil {
		t.Fatalf("restore of latest while a backup ended: %v", err)
	}
	if res.Files != 1 {
		t.Errorf("restored %d files, want the 1 of the snapshot listed", res.Files)
	}
}
