package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
	"github.com/cloudstic/cloudstic/internal/store/storetest"
)

// onlyStore hides every method of a store but those of store.Store.
type onlyStore struct{ store.Store }

// TestFencedTempCleanup: the fence of a store that leaves temp files behind
// cleans them up within the lease (prune's clean-up once ran on the store
// below the fence), refuses to after it, and a store that leaves none is
// not made to look as if it did.
func TestFencedTempCleanup(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := local.New(dir)
	l, err := lock.AcquireExclusive(ctx, st, "prune", lock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fenced := l.Fence(st)
	storetest.RunTempCleaner(t, fenced, storetest.PlantIn(t, dir), storetest.ExistsIn(dir))
	if _, ok := l.Fence(onlyStore{st}).(store.TempCleaner); ok {
		t.Error("the fence of a store without temp files claims to clean them")
	}

	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	const stale = "data/ab/.tmp-0123456789abcdef"
	storetest.PlantIn(t, dir)(stale, time.Now().Add(-48*time.Hour))
	n, err := fenced.(store.TempCleaner).RemoveStaleTemp(ctx, time.Now().Add(-24*time.Hour))
	if !errors.Is(err, lock.ErrLeaseLost) || n != 0 {
		t.Fatalf("after the release: removed %d, %v; want none, lock.ErrLeaseLost", n, err)
	}
	if !storetest.ExistsIn(dir)(stale) {
		t.Fatal("a temp file was removed after the lease ended")
	}
}
