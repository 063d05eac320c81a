package lock

import (
	"context"
	"errors"
	"sync"
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

// TestCheckDuringRefresh holds a Check's request in the store while the
// refresher rewrites the keys. The refresh must not wait for the check (its
// timing margins do not count a check's requests), and the check must not
// take our own refresh for another process's takeover: before they were
// told apart, a check that read the keys before a refresh and the store
// after it lost the lease (a prune deleting packs for longer than a refresh
// period failed that way).
func TestCheckDuringRefresh(t *testing.T) {
	for _, sk := range storeKinds {
		for _, shared := range []bool{true, false} {
			t.Run(sk.name+"/"+kindName(shared), func(t *testing.T) {
				clk := newFake()
				st := newTestStore(t, clk)
				st.caps = sk.caps
				inCheck, proceed := make(chan struct{}), make(chan struct{})
				var once sync.Once
				st.hook = func(ctx context.Context, op, key string) error {
					if who(ctx) == "check" && (op == "stat" || op == "get") {
						once.Do(func() { close(inCheck) })
						<-proceed
					}
					return nil
				}
				l, err := acquire(t, clk, st, shared, "op", testOpts(clk, "me"))
				if err != nil {
					t.Fatal(err)
				}
				checked := make(chan error, 1)
				go func() { checked <- l.Check(as(context.Background(), "check")) }()
				<-inCheck
				before := l.Info().ExpiresAt
				waiting(t, clk, 2)
				clk.Advance(DefaultRefreshInterval)
				waitFor(t, "the refresh while a check is in its request", func() bool { return l.Info().ExpiresAt.After(before) })
				close(proceed)
				if err := <-checked; err != nil {
					t.Fatalf("check during a refresh: %v", err)
				}
				if err := l.Check(context.Background()); err != nil {
					t.Fatalf("check after the refresh: %v", err)
				}
				release(t, l)
			})
		}
	}
}
