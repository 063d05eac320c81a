package backup_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/repo/repotest"
	"github.com/cloudstic/cloudstic/internal/store"
)

// TestBackupEnd: a backup checks its lease while its final index file is
// being written (repotest.EndGate holds the index PUT until the check's
// request arrives) and writes its snapshot only once both are answered;
// when the check finds the lease lost, no snapshot is written and the
// error says why. A plain backup and a backup from stdin end the same way.
// An unchanged tree with IgnoreEmpty writes nothing and needs no check.
func TestBackupEnd(t *testing.T) {
	tests := []endCase{
		{name: "tree"},
		{name: "tree, lease lost", broken: true},
		{name: "stdin", stdin: true},
		{name: "stdin, lease lost", stdin: true, broken: true},
		{name: "unchanged with IgnoreEmpty", unchanged: true},
		{name: "stdin unchanged with IgnoreEmpty", stdin: true, unchanged: true},
		{name: "dry run", dryRun: true},
		{name: "stdin dry run", stdin: true, dryRun: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testBackupEnd(t, tc)
		})
	}
}

// endCase is a case of TestBackupEnd: a backup of a tree or from stdin,
// whose lease check finds the lock broken, which runs a second time with
// IgnoreEmpty and nothing changed, or which is a dry run.
type endCase struct {
	name                             string
	stdin, broken, unchanged, dryRun bool
}

func testBackupEnd(t *testing.T, tc endCase) {
	ctx := context.Background()
	dir := t.TempDir()
	inner := checktest.NewRepo(t, dir)
	src := t.TempDir()
	checktest.WriteFile(t, src, "f", 1, 100<<10)
	opts := func() backup.Options {
		o := backup.Options{Path: src, Hostname: "h", IgnoreEmpty: tc.unchanged, DryRun: tc.dryRun}
		if !tc.stdin {
			return o
		}
		f, err := os.Open(filepath.Join(src, "f"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = f.Close() })
		o.Path, o.Stream = "", &backup.Stream{Reader: f, Filename: "f"}
		return o
	}
	run := func(st store.Store) (*backup.Result, error) {
		r := checktest.Open(t, st)
		if _, err := r.LoadIndex(ctx); err != nil {
			t.Fatal(err)
		}
		heads, _, err := r.SnapshotHeads(ctx)
		if err != nil {
			t.Fatal(err)
		}
		l, err := lock.AcquireShared(ctx, st, "backup", lock.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = l.Release(ctx) }() // lost when broken
		w, err := r.Writer(l)
		if err != nil {
			t.Fatal(err)
		}
		return backup.Run(ctx, w, heads, opts())
	}
	if tc.unchanged {
		if _, err := run(inner); err != nil {
			t.Fatal(err)
		}
	}
	gate := repotest.NewEndGate(10 * time.Second)
	res, err := run(gate.Wrap(inner, tc.broken))
	ev := gate.Events()
	snaps, rerr := os.ReadDir(filepath.Join(dir, "snapshots"))
	if rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
		t.Fatal(rerr)
	}
	switch {
	case tc.broken:
		if !errors.Is(err, lock.ErrLeaseLost) || !strings.Contains(err.Error(), "before writing the snapshot") {
			t.Errorf("backup after a lost lease: %v, want %v before writing the snapshot", err, lock.ErrLeaseLost)
		}
		if len(snaps) != 0 || slices.Contains(ev, repotest.SnapshotSent) {
			t.Errorf("snapshot written after the lease was lost: %v (requests %v)", snaps, ev)
		}
		return
	case err != nil:
		t.Fatalf("backup: %v (requests %v)", err, ev)
	case tc.dryRun:
		if len(snaps) != 0 || !res.ID.IsZero() || len(ev) != 0 {
			t.Errorf("dry run: %d snapshots, snapshot %v, requests %v; want no index, check or snapshot",
				len(snaps), res.ID, ev)
		}
		return
	case len(snaps) != 1: // with unchanged, the first run's
		t.Fatalf("%d snapshots in the store, want 1", len(snaps))
	case tc.unchanged:
		if !res.Unchanged || !res.ID.IsZero() || len(ev) != 0 {
			t.Errorf("unchanged run: Unchanged %v, snapshot %v, requests %v; want no index, check or snapshot",
				res.Unchanged, res.ID, ev)
		}
		return
	}
	// One index PUT and one check, both answered before the snapshot PUT;
	// the check was sent before the index PUT was answered (the gate held it).
	want := []string{repotest.IndexSent, repotest.IndexDone, repotest.CheckSent, repotest.CheckDone}
	if len(ev) != 5 || !sameEvents(ev[:4], want) || ev[4] != repotest.SnapshotSent ||
		slices.Index(ev, repotest.CheckSent) > slices.Index(ev, repotest.IndexDone) {
		t.Errorf("backup's end: %v; want %v in some order with the check sent before the index PUT is answered, then %s",
			ev, want, repotest.SnapshotSent)
	}
}

// sameEvents reports whether got and want hold the same events.
func sameEvents(got, want []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want)))
}
