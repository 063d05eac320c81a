package repo

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/index"
	"github.com/cloudstic/cloudstic/internal/store"
)

// indexGate holds the GETs of index files, while closed, until it opens
// or their ctx ends: a rebuild of the on-disk index caught mid-way.
type indexGate struct {
	store.Store
	closed  atomic.Bool
	arrived chan struct{} // a held GET has arrived (one value per GET)
	open    chan struct{} // closed to let every held GET through
}

func newIndexGate(st store.Store) *indexGate {
	return &indexGate{Store: st, arrived: make(chan struct{}, 64), open: make(chan struct{})}
}

func (g *indexGate) Get(ctx context.Context, key string, max int64) ([]byte, error) {
	if g.closed.Load() && strings.HasPrefix(key, IndexPrefix) {
		g.arrived <- struct{}{}
		select {
		case <-g.open:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return g.Store.Get(ctx, key, max)
}

// wait waits for a GET to be held (at most stopWait).
func (g *indexGate) wait(t *testing.T) {
	t.Helper()
	select {
	case <-g.arrived:
	case <-time.After(stopWait):
		t.Fatal("no rebuild read an index file")
	}
}

// stopWait bounds the wait for a stopped rebuild's lookup to return: it
// returns at once, while the old rebuild, which ignored cancellation,
// waited for the gate.
const stopWait = 10 * time.Second

// TestDiskIndexRebuildStopped: a rebuild of a damaged on-disk index
// stops when the ctx of the lookup that started it ends: that lookup
// returns context.Canceled at once, not a missing blob; the rebuild
// leaves no file behind; a lookup under an ended ctx says "cannot tell",
// never "absent"; and the next lookup with a live ctx (one that was
// waiting for the stopped rebuild, or a later one) rebuilds it and finds
// every blob, and the next run uses the file it wrote. The old rebuild
// ran under context.WithoutCancel: its lookup waited for the gate.
func TestDiskIndexRebuildStopped(t *testing.T) {
	r, st := newTestRepo(t)
	blobs := savedBlobs(t, r, st, 400) // 5 record blocks
	tests := []struct {
		name   string
		waiter bool // a lookup with a live ctx runs beside the stopped one
	}{
		{name: "then rebuilt by a later lookup"},
		{name: "then rebuilt by a waiting lookup", waiter: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "index")
			gate := newIndexGate(st)
			release := sync.OnceFunc(func() { close(gate.open) })
			defer release() // a failed test's lookups, before its cleanups read the index
			r2 := openWithDiskIndex(t, gate, dir)
			path := r2.Index().Base().Path()
			damageDisk(t, r2.Index().Base(), "record block")
			gate.closed.Store(true)

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			stopped := make(chan error, 1)
			go func() { stopped <- findAll(ctx, r2, blobs) }()
			gate.wait(t) // the rebuild is under way
			var waited chan error
			if tt.waiter {
				waited = make(chan error, 1)
				go func() { waited <- findAll(context.Background(), r2, blobs) }()
			}
			cancel()
			select {
			case err := <-stopped:
				if !errors.Is(err, context.Canceled) || errors.Is(err, ErrBlobNotFound) {
					t.Fatalf("stopped lookup: %v, want context.Canceled", err)
				}
			case <-time.After(stopWait):
				release()
				t.Fatalf("the rebuild did not stop with its lookup's ctx (then: %v)", <-stopped)
			}
			if tt.waiter {
				gate.wait(t) // the waiter rebuilds under its own ctx
			} else {
				checkStoppedState(t, r2, dir, blobs)
			}
			release()
			if tt.waiter {
				if err := waitFor(t, waited); err != nil {
					t.Fatalf("waiting lookup: %v", err)
				}
			}
			if errs := loadAll(context.Background(), r2, blobs); len(errs) > 0 {
				t.Fatalf("%d blobs not read, first: %v", len(errs), errs[0])
			}
			if r2.Index().Base() == nil || r2.Index().Err() != nil {
				t.Fatalf("on-disk part %v, Err %v; want a rebuilt part", r2.Index().Base(), r2.Index().Err())
			}
			checkNextRun(t, st, dir, path, blobs)
		})
	}
}

// waitFor returns what c gives (within stopWait).
func waitFor(t *testing.T, c <-chan error) error {
	t.Helper()
	select {
	case err := <-c:
		return err
	case <-time.After(stopWait):
		t.Fatal("a lookup did not return")
		return nil
	}
}

// findAll looks every blob up under ctx and returns the first failure,
// or a blob not found.
func findAll(ctx context.Context, r *Repository, blobs map[id.ID][]byte) error {
	for b := range blobs {
		_, ok, err := r.Index().Find(ctx, b)
		if err != nil {
			return err
		}
		if !ok {
			return ErrBlobNotFound
		}
	}
	return nil
}

// checkStoppedState checks what a stopped rebuild left: no on-disk index
// file nor temporary file in dir, no failure kept, and lookups under an
// ended ctx that fail with it rather than answer "absent".
func checkStoppedState(t *testing.T, r *Repository, dir string, blobs map[id.ID][]byte) {
	t.Helper()
	left, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Fatalf("the stopped rebuild left %v", left)
	}
	if err := r.Index().Err(); err != nil {
		t.Fatalf("Err after a stopped rebuild: %v", err)
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	var wg sync.WaitGroup
	for b := range blobs {
		wg.Go(func() {
			if _, ok, err := r.Index().Find(ended, b); ok || !errors.Is(err, context.Canceled) {
				t.Errorf("Find(%s) under an ended ctx: %v, %v; want context.Canceled", b.Short(), ok, err)
			}
			if known, err := r.Index().Contains(ended, b); known || !errors.Is(err, context.Canceled) {
				t.Errorf("Contains(%s) under an ended ctx: %v, %v; want context.Canceled", b.Short(), known, err)
			}
		})
	}
	wg.Wait()
	if _, err := r.Index().Packs(ended); !errors.Is(err, context.Canceled) {
		t.Errorf("Packs under an ended ctx: %v", err)
	}
	if err := r.Index().Each(func(id.ID, index.Location) {}); err == nil {
		t.Error("Each read a part left to be rebuilt")
	}
}
