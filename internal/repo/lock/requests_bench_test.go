package lock

import (
	"context"
	"testing"

	"github.com/cloudstic/cloudstic/internal/store/local"
	"github.com/cloudstic/cloudstic/internal/store/wrap"
)

// TestLockRequestCounts counts the store requests of a lock's life on a
// store with conditional writes, through the real logging wrapper and the
// real clock (docs/lock.md, "Cost"; TestRequestCounts counts the same on a
// fake clock).
func TestLockRequestCounts(t *testing.T) {
	tests := []struct {
		name      string
		exclusive bool
		acquire   int64
		refresh   int64
		release   int64
	}{
		{"shared", false, 5, 1, 1},
		{"exclusive", true, 8, 2, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			st := wrap.NewLogging(local.New(t.TempDir()), t.Logf)
			acquire := AcquireShared
			if tc.exclusive {
				acquire = AcquireExclusive
			}
			step := func(name string, limit int64, fn func() error) {
				t.Helper()
				before := st.Counts().Requests
				if err := fn(); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if n := st.Counts().Requests - before; n > limit {
					t.Errorf("%s took %d store requests, want at most %d", name, n, limit)
				}
			}
			var l *Lock
			step("acquire", tc.acquire, func() (err error) {
				l, err = acquire(ctx, st, "test", Options{})
				return err
			})
			step("refresh", tc.refresh, func() error { return l.refresh(ctx) })
			step("release", tc.release, func() error { return l.Release(ctx) })
		})
	}
}
