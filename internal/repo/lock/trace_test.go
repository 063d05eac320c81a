package lock

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/cloudstic/cloudstic/internal/store"
)

// Options.Trace sees a lease's life and its fenced writes, in order.
func TestTrace(t *testing.T) {
	clk := newFake()
	st := newTestStore(t, clk)
	var mu sync.Mutex
	var got []string
	o := testOpts(clk, "me")
	o.Trace = func(ev TraceEvent) {
		mu.Lock()
		defer mu.Unlock()
		if ev.SafeEndIn <= 0 || !isIntent(ev.Lease) {
			t.Errorf("event %+v: want the intent as lease and time left", ev)
		}
		got = append(got, ev.Event+" "+ev.Key)
	}
	l, err := acquire(t, clk, st, false, "prune", o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Fence(st).Put(context.Background(), "data/x", []byte("x"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	want := l.Info().ExpiresAt
	waiting(t, clk, 2)
	clk.Advance(DefaultRefreshInterval)
	// Wait for the event, not for ExpiresAt: the refresher publishes the
	// new lease before it reports it, and a release in that gap would be
	// traced first (legitimately: the holder's work ends at release).
	waitFor(t, "refresh", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) > 0 && got[len(got)-1] == TraceRenewed+" "
	})
	if !l.Info().ExpiresAt.After(want) {
		t.Fatalf("renewed, but the lease still expires at %v", want)
	}
	release(t, l)
	mu.Lock()
	defer mu.Unlock()
	if s := strings.Join(got, ","); s != "acquired ,write data/x,written data/x,renewed ,released " {
		t.Fatalf("trace %q", s)
	}
}
