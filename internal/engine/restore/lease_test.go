package restore_test

import (
	"context"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
)

// lease holds a shared lock on r's store for the rest of the test, as the
// operation layer does around a restore.
func lease(t testing.TB, r *repo.Repository) *lock.Lock {
	t.Helper()
	l, err := lock.AcquireShared(context.Background(), r.Store(), "restore", lock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Release(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return l
}
