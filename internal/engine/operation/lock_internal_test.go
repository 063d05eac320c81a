package operation

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// Work that loses its lease fails, unless all it asked of the store ran
// before the loss: a lease that runs out (the machine slept) after the
// work's last request takes nothing from it, but work that swallows an
// error of a request the lost lease refused must not report success.
func TestWithLockAfterLoss(t *testing.T) {
	rows := []struct {
		name string
		// work runs under the lease; expire ends the lease's safe end.
		work    func(ctx context.Context, fenced store.Store, expire func()) error
		wantErr bool
	}{
		{"lost after the last request", func(ctx context.Context, fenced store.Store, expire func()) error {
			if _, err := fenced.Put(ctx, "data/a", []byte("x"), store.PutOptions{}); err != nil {
				return err
			}
			expire()
			return nil
		}, false},
		{"a refused request's error swallowed", func(ctx context.Context, fenced store.Store, expire func()) error {
			expire()
			_, err := fenced.Put(ctx, "data/a", []byte("x"), store.PutOptions{})
			_ = err // what the test is about: work that ignores the refusal
			return nil
		}, true},
		{"a refused request's error returned", func(ctx context.Context, fenced store.Store, expire func()) error {
			expire()
			_, err := fenced.Put(ctx, "data/a", []byte("x"), store.PutOptions{})
			return err
		}, true},
	}
	for _, row := range rows {
		for _, m := range []mode{shared, exclusive} {
			t.Run(row.name+"/"+map[mode]string{shared: "shared", exclusive: "exclusive"}[m], func(t *testing.T) {
				clk := clock.NewFake(time.Now().UTC().Truncate(time.Second))
				st := local.New(t.TempDir())
				e := env{lock: lock.Options{Clock: clk, Hostname: "me", PID: 1}, clock: clk}
				ctx := context.Background()
				err := withLock(ctx, e, st, m, "test", func(ctx context.Context, lease *lock.Lock) error {
					return row.work(ctx, lease.Fence(st), func() { clk.Advance(lock.DefaultTTL) })
				})
				if row.wantErr != (err != nil) || (err != nil && !errors.Is(err, lock.ErrLeaseLost)) {
					t.Fatalf("withLock: %v, want an error wrapping ErrLeaseLost: %v", err, row.wantErr)
				}
			})
		}
	}
}
