package backup_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
)

// TestIgnoreEmptyAndTime: Options.Time stamps the snapshot (never in the
// future), and IgnoreEmpty writes nothing when the tree and the source's
// own metadata are the parent's, whatever the host.
func TestIgnoreEmptyAndTime(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := t.TempDir()
	write(t, filepath.Join(src, "f"), "content")
	st := checktest.NewRepo(t, t.TempDir())
	now := time.Now().Add(time.Hour)
	runAt := func(opts backup.Options, snaps []snapshot.WithID) (*backup.Result, error) {
		r := checktest.Open(t, st)
		if _, err := r.LoadIndex(ctx); err != nil {
			t.Fatal(err)
		}
		opts.Path, opts.Workers, opts.Clock = src, 2, clock.NewFake(now)
		return backup.Run(ctx, checktest.Writer(t, st, r), snapshot.Heads(snaps), opts)
	}
	old := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	first, err := runAt(backup.Options{Hostname: "h", Time: old}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !first.Snapshot.Time.Equal(old) || first.ID.IsZero() {
		t.Fatalf("snapshot time %v id %v, want %v and saved", first.Snapshot.Time, first.ID, old)
	}
	snaps := []snapshot.WithID{{ID: first.ID, Snapshot: first.Snapshot}}
	same, err := runAt(backup.Options{Hostname: "h", IgnoreEmpty: true}, snaps)
	if err != nil {
		t.Fatal(err)
	}
	if !same.Unchanged || !same.ID.IsZero() || same.Parent == nil || same.Parent.ID != first.ID {
		t.Errorf("unchanged run: Unchanged %v, id %v, parent %v; want unchanged, unsaved, parent %s", same.Unchanged, same.ID, same.Parent, first.ID.Short())
	}
	other, err := runAt(backup.Options{Hostname: "other", IgnoreEmpty: true}, snaps)
	if err != nil || other.Unchanged || other.ID.IsZero() {
		t.Errorf("another host (no parent): %v, Unchanged %v: want a snapshot", err, other.Unchanged)
	}
	if runtime.GOOS == "windows" {
		// Windows has no mode bits to change: change the mtime instead.
		if err := os.Chtimes(src, old, old); err != nil {
			t.Fatal(err)
		}
	} else {
		chmod(t, src, 0o700)
	}
	moved, err := runAt(backup.Options{Hostname: "h", IgnoreEmpty: true}, snaps)
	if err != nil || moved.Unchanged {
		t.Errorf("after a change of the source itself: %v, Unchanged %v: want a snapshot", err, moved.Unchanged)
	}
	if _, err := runAt(backup.Options{Hostname: "h", Time: now.Add(time.Minute)}, snaps); !errors.Is(err, backup.ErrFutureTime) {
		t.Errorf("a time after the clock: %v, want ErrFutureTime", err)
	}
}
