package backup_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
)

// TestDamagedParent: a parent whose head was listed (from the metadata
// cache's heads file) but whose object is damaged by now is passed over
// for the next latest snapshot of the group and reported to the damage
// watcher; the backup succeeds.
func TestDamagedParent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	src := t.TempDir()
	write(t, filepath.Join(src, "f"), "content")
	st := checktest.NewRepo(t, dir)
	run := func(heads []snapshot.Head, watch func(repo.Damaged)) *backup.Result {
		r := checktest.Open(t, st)
		if watch != nil {
			r.WatchDamage(watch)
		}
		if _, err := r.LoadIndex(ctx); err != nil {
			t.Fatal(err)
		}
		res, err := backup.Run(ctx, checktest.Writer(t, st, r), heads, backup.Options{Path: src, Hostname: "a", Workers: 2,
			Time: time.Unix(int64(100+len(heads)), 0)})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := run(nil, nil)
	second := run([]snapshot.Head{snapshot.HeadOf(first.ID, first.Snapshot)}, nil)
	heads := []snapshot.Head{snapshot.HeadOf(first.ID, first.Snapshot), snapshot.HeadOf(second.ID, second.Snapshot)}
	key := repo.SnapshotKey(second.ID)
	if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(key)), []byte("bit rot"), 0o600); err != nil {
		t.Fatal(err)
	}
	var heard []string
	third := run(heads, func(d repo.Damaged) { heard = append(heard, d.Key) })
	if third.Parent == nil || third.Parent.ID != first.ID {
		t.Errorf("parent %v, want the first snapshot %s", third.Parent, first.ID.Short())
	}
	if len(heard) != 1 || heard[0] != key {
		t.Errorf("the damage watcher heard %v, want %s", heard, key)
	}
}
