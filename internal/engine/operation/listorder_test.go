package operation_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/check"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/engine/restore"
	"github.com/cloudstic/cloudstic/internal/store"
)

// afterList is a store that runs hook once, right after the first listing
// of prefix has answered: another host's backup ending at that moment.
type afterList struct {
	store.Store
	prefix string
	once   sync.Once
	hook   func()
}

func (s *afterList) List(ctx context.Context, prefix string, fn func(store.ObjectInfo) error) error {
	err := s.Store.List(ctx, prefix, fn)
	if strings.HasPrefix(prefix, s.prefix) {
		s.once.Do(s.hook)
	}
	return err
}

// backupAt returns a function that backs up src into the repository in
// dir, with one more file each time.
func backupAt(t *testing.T, dir, src string) func() {
	n := 0
	return func() {
		n++
		checktest.WriteFile(t, src, fmt.Sprintf("f%d", n), uint64(n), 64<<10)
		r := openRepo(t, dir)
		defer r.Close() //nolint:errcheck // local store: nothing to flush
		if _, err := operation.Backup(context.Background(), r, backup.Options{Path: src}, nil); err != nil {
			t.Error(err)
		}
	}
}

// TestCheckBesideBackup: check lists the snapshots, then the packs, then
// the index files, so a backup ending between any two of them is not
// reported damaged: it wrote its packs, its index files and its snapshot
// in that order.
func TestCheckBesideBackup(t *testing.T) {
	for _, prefix := range []string{"snapshots/", "data/", "index/packs"} {
		t.Run("after listing "+prefix, func(t *testing.T) {
			dir := t.TempDir()
			checktest.NewRepo(t, dir)
			backupOnce := backupAt(t, dir, t.TempDir())
			backupOnce()
			o := options(dir)
			hooked := &afterList{prefix: prefix, hook: backupOnce}
			o.Store.TestWrapper = func(st store.Store) store.Store { hooked.Store = st; return hooked }
			r, err := operation.Open(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close() //nolint:errcheck // local store: nothing to flush
			res, err := operation.Check(context.Background(), r, check.Options{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !res.OK() {
				t.Fatalf("check beside a backup found errors: %+v", res.Errors)
			}
		})
	}
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
	backupOnce := backupAt(t, dir, t.TempDir())
	backupOnce()
	o := options(dir)
	hooked := &afterList{prefix: "index/packs", hook: backupOnce}
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
