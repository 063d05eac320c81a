package lock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/store"
)

// delayStore delays every Put by a fixed time on a fake clock (a slow or
// stalled network), cut short by cancellation, and records the fake time
// at which each Put reached the store behind it.
type delayStore struct {
	store.Store
	clk   *clock.Fake
	delay time.Duration

	mu      sync.Mutex
	arrived []time.Time
}

func (d *delayStore) Put(ctx context.Context, key string, data []byte, opts store.PutOptions) (store.ObjectInfo, error) {
	if err := clock.Sleep(ctx, d.clk, d.delay); err != nil {
		return store.ObjectInfo{}, err
	}
	d.mu.Lock()
	d.arrived = append(d.arrived, d.clk.Now())
	d.mu.Unlock()
	return d.Store.Put(ctx, key, data, opts)
}

// A holder whose refreshes fail keeps writing data through its fenced store
// over a network that delays each request by 7 s: no write reaches the store
// after the lease's safe end, and the work sees the loss.
func TestFencedWritesStopAtSafeEnd(t *testing.T) {
	for _, shared := range []bool{true, false} {
		t.Run(kindName(shared), func(t *testing.T) {
			clk := newFake()
			st := newTestStore(t, clk)
			l, err := acquire(t, clk, st, shared, "op", testOpts(clk, "me"))
			if err != nil {
				t.Fatal(err)
			}
			defer l.Release(context.Background()) //nolint:errcheck // the lease is lost on purpose
			safeEnd := clk.Now().Add(-l.at.elapsed(clk)).Add(DefaultTTL - DefaultSafetyMargin)
			st.hook = func(_ context.Context, op, key string) error {
				if op == "put" && (key == ExclusiveKey || isIntent(key) || key == l.keys[0].key) {
					return errInjected // refreshes fail from now on
				}
				return nil
			}
			slow := &delayStore{Store: st, clk: clk, delay: 7 * time.Second}
			work := l.Fence(slow)
			workErr := make(chan error, 1)
			go func() {
				for i := 0; ; i++ {
					if _, err := work.Put(context.Background(), fmt.Sprintf("data/%04d", i), []byte("x"), store.PutOptions{}); err != nil {
						workErr <- err
						return
					}
				}
			}()
			var err2 error
			for err2 == nil {
				select {
				case err2 = <-workErr:
				case <-time.After(time.Millisecond):
					clk.Advance(100 * time.Millisecond)
				}
			}
			if !errors.Is(err2, ErrLeaseLost) && !errors.Is(err2, context.Canceled) {
				t.Fatalf("work stopped with %v, want the lease's loss", err2)
			}
			slow.mu.Lock()
			defer slow.mu.Unlock()
			if len(slow.arrived) == 0 {
				t.Fatal("no write went through: the test proved nothing")
			}
			last := slow.arrived[len(slow.arrived)-1]
			t.Logf("%d writes; the last reached the store %v before the safe end", len(slow.arrived), safeEnd.Sub(last))
			if last.After(safeEnd) {
				t.Fatalf("a write reached the store %v after the lease's safe end", last.Sub(safeEnd))
			}
			if _, err := work.Put(context.Background(), "data/late", nil, store.PutOptions{}); !errors.Is(err, ErrLeaseLost) {
				t.Fatalf("write after the loss: %v, want ErrLeaseLost", err)
			}
		})
	}
}

// A fenced store reads ranges into the caller's buffer while the lease
// holds, and refuses to once it is released, as for GetRange.
func TestFencedReadRange(t *testing.T) {
	ctx := context.Background()
	clk := newFake()
	st := newTestStore(t, clk)
	if _, err := st.Put(ctx, "data/k", []byte("0123456789"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	l, err := acquire(t, clk, st, true, "op", testOpts(clk, "me"))
	if err != nil {
		t.Fatal(err)
	}
	rr, ok := l.Fence(st).(store.RangeReader)
	if !ok {
		t.Fatal("the fenced store does not read ranges into buffers")
	}
	buf := make([]byte, 4)
	if err := rr.ReadRange(ctx, "data/k", 3, buf); err != nil || string(buf) != "3456" {
		t.Fatalf("ReadRange under the lease: %q, %v", buf, err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rr.ReadRange(ctx, "data/k", 3, buf); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("ReadRange after release: %v, want ErrLeaseLost", err)
	}
}

// The fence counts and traces each request it refuses, or cuts short,
// because the lease is gone, so that work which swallows such an error
// can still be told it did less than it thinks: requests while the lease
// holds are not counted, a refused one is, with its key.
func TestFenceCountsRefusedRequests(t *testing.T) {
	rows := []struct {
		name string
		end  func(l *Lock, clk *clock.Fake) // how the lease ends
	}{
		{"past its safe end", func(_ *Lock, clk *clock.Fake) { clk.Advance(DefaultTTL) }},
		{"released", func(l *Lock, _ *clock.Fake) { release(t, l) }},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			ctx := context.Background()
			clk := newFake()
			st := newTestStore(t, clk)
			var mu sync.Mutex
			var refused []string
			o := testOpts(clk, "me")
			o.Trace = func(ev TraceEvent) {
				if ev.Event == TraceRefused {
					mu.Lock()
					refused = append(refused, ev.Key)
					mu.Unlock()
				}
			}
			l, err := acquire(t, clk, st, true, "op", o)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Release(ctx) //nolint:errcheck // a second Release does nothing
			work := l.Fence(st)
			if _, err := work.Put(ctx, "data/a", []byte("x"), store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := work.Get(ctx, "data/missing", 10); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("get of a missing key under the lease: %v", err)
			}
			if n := l.Refused(); n != 0 {
				t.Fatalf("%d refused while the lease holds", n)
			}
			row.end(l, clk)
			if _, err := work.Get(ctx, "data/a", 10); !errors.Is(err, ErrLeaseLost) {
				t.Fatalf("get after the lease ended: %v, want ErrLeaseLost", err)
			}
			if n := l.Refused(); n != 1 {
				t.Fatalf("Refused() = %d, want 1", n)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(refused) != 1 || refused[0] != "data/a" {
				t.Fatalf("refused traced as %q, want [data/a]", refused)
			}
		})
	}
}

// A stream opened through the fence under a lease reads while the lease
// holds, and its next Read fails with ErrLeaseLost once the lease has
// ended (released, or past its safe end), even with bytes of the range
// left: the request is counted as refused once, when the stream is closed.
func TestFencedOpenRange(t *testing.T) {
	rows := []struct {
		name string
		end  func(l *Lock, clk *clock.Fake) // how the lease ends
	}{
		{"past its safe end", func(_ *Lock, clk *clock.Fake) { clk.Advance(DefaultTTL) }},
		{"released", func(l *Lock, _ *clock.Fake) { release(t, l) }},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			ctx := context.Background()
			clk := newFake()
			st := newTestStore(t, clk)
			if _, err := st.Put(ctx, "data/k", []byte("0123456789"), store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			l, err := acquire(t, clk, st, true, "op", testOpts(clk, "me"))
			if err != nil {
				t.Fatal(err)
			}
			defer l.Release(ctx) //nolint:errcheck // a second Release does nothing
			ro, ok := l.Fence(st).(store.RangeOpener)
			if !ok {
				t.Fatal("the fenced store does not stream ranges")
			}
			rc, err := ro.OpenRange(ctx, "data/k", 2, 8)
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 3)
			if _, err := io.ReadFull(rc, buf); err != nil || string(buf) != "234" {
				t.Fatalf("read under the lease: %q, %v", buf, err)
			}
			row.end(l, clk)
			if n, err := rc.Read(buf); n != 0 || !errors.Is(err, ErrLeaseLost) {
				t.Fatalf("read after the lease ended: %d bytes, %v; want ErrLeaseLost", n, err)
			}
			if _, err := rc.Read(buf); !errors.Is(err, ErrLeaseLost) {
				t.Fatalf("second read after the lease ended: %v; want ErrLeaseLost", err)
			}
			if err := rc.Close(); err != nil {
				t.Fatal(err)
			}
			if n := l.Refused(); n != 1 {
				t.Fatalf("Refused() = %d, want 1", n)
			}
			if _, err := ro.OpenRange(ctx, "data/k", 0, 1); !errors.Is(err, ErrLeaseLost) {
				t.Fatalf("open after the lease ended: %v, want ErrLeaseLost", err)
			}
		})
	}
}

// A stream read to its end under the lease ends its request without a
// refusal; a missing key is store.ErrNotFound.
func TestFencedOpenRangeWhole(t *testing.T) {
	ctx := context.Background()
	clk := newFake()
	st := newTestStore(t, clk)
	if _, err := st.Put(ctx, "data/k", []byte("0123456789"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	l, err := acquire(t, clk, st, true, "op", testOpts(clk, "me"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx) //nolint:errcheck // released at the end of the test
	fenced := l.Fence(st)
	rc, err := store.OpenRange(ctx, fenced, "data/k", 1, 9)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rc)
	if err != nil || string(got) != "123456789" {
		t.Fatalf("ReadAll: %q, %v", got, err)
	}
	if err := rc.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := store.OpenRange(ctx, fenced, "data/missing", 0, 1); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("missing key: %v, want ErrNotFound", err)
	}
	if n := l.Refused(); n != 0 {
		t.Fatalf("Refused() = %d, want 0", n)
	}
}
