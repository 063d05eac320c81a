package lock

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestLeaseKeptUntilRelease cancels the acquiring context (Ctrl-C) while
// the work takes longer than a TTL to stop: the work's context ends at
// once, but the lease is still refreshed, because the work may still be
// writing, and Release then removes the key. A lease that stopped with the
// acquiring context would run out under work that is still stopping, and
// Release would have to leave the key behind.
func TestLeaseKeptUntilRelease(t *testing.T) {
	for _, sk := range storeKinds {
		for _, shared := range []bool{true, false} {
			t.Run(sk.name+"/"+kindName(shared), func(t *testing.T) {
				clk := newFake()
				st := newTestStore(t, clk)
				st.caps = sk.caps
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				l, err := advanceUntil(t, clk, 100*time.Millisecond, func() (*Lock, error) {
					if shared {
						return AcquireShared(ctx, st, "op", testOpts(clk, "me"))
					}
					return AcquireExclusive(ctx, st, "op", testOpts(clk, "me"))
				})
				if err != nil {
					t.Fatal(err)
				}
				cancel()
				<-l.Context().Done()
				if cause := context.Cause(l.Context()); !errors.Is(cause, context.Canceled) || errors.Is(cause, ErrLeaseLost) {
					t.Fatalf("work context ended with %v, want the caller's cancellation", cause)
				}
				for i := range 4 { // four refresh periods: two TTLs
					want := l.Info().ExpiresAt.Add(DefaultRefreshInterval)
					waiting(t, clk, 2)
					clk.Advance(DefaultRefreshInterval)
					waitFor(t, "refresh", func() bool { return !l.Info().ExpiresAt.Before(want) })
					if l.Info().Err != nil {
						t.Fatalf("refresh %d after the cancellation: lease lost: %v", i, l.Info().Err)
					}
				}
				release(t, l)
				if locks, err := List(context.Background(), st, Options{Clock: clk}); err != nil || len(locks) != 0 {
					t.Fatalf("after release: %d locks (%v), want none", len(locks), err)
				}
			})
		}
	}
}
