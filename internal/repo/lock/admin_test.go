package lock

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/store"
)

// Garbage under a lock key counts as held, with an error saying why.
func TestBadLockObjectsCountAsHeld(t *testing.T) {
	now := time.Now().UTC()
	sharedPayload := payload{Operation: "backup", Holder: "h", AcquiredAt: now, ExpiresAt: now.Add(time.Minute), IsShared: true}
	objects := []struct {
		name string
		data []byte
	}{
		{"garbage", []byte("\x00\xffnot json")},
		{"empty", nil},
		{"huge", []byte(`{"operation":"` + strings.Repeat("x", 200<<10) + `"}`)},
		{"missing fields", []byte(`{"operation":"prune"}`)},
		{"bad time", []byte(`{"operation":"prune","holder":"h","acquired_at":"yesterday","expires_at":"tomorrow","is_shared":false}`)},
		{"wrong kind", sharedPayload.encode()},
	}
	for _, obj := range objects {
		t.Run(obj.name, func(t *testing.T) {
			clk := newFake()
			st := newTestStore(t, clk)
			if _, err := st.Put(context.Background(), ExclusiveKey, obj.data, store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			for _, shared := range []bool{true, false} {
				_, err := acquire(t, clk, st, shared, "op", testOpts(clk, "me"))
				if !errors.Is(err, ErrLocked) || !errors.Is(err, ErrBadLock) || !strings.Contains(err.Error(), "counts as held") {
					t.Fatalf("shared=%t: got %v, want a held, bad lock", shared, err)
				}
			}
			infos, err := List(context.Background(), st, Options{Clock: clk})
			if err != nil || len(infos) != 1 || !errors.Is(infos[0].Err, ErrBadLock) {
				t.Fatalf("list: %+v, %v", infos, err)
			}
		})
	}
}

// A bad shared lock blocks prune but not another backup.
func TestBadSharedLock(t *testing.T) {
	clk := newFake()
	st := newTestStore(t, clk)
	key := SharedPrefix + "garbage"
	if _, err := st.Put(context.Background(), key, []byte("{"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := acquire(t, clk, st, false, "prune", testOpts(clk, "me")); !errors.Is(err, ErrBadLock) {
		t.Fatalf("exclusive: %v", err)
	}
	l, err := acquire(t, clk, st, true, "backup", testOpts(clk, "me"))
	if err != nil {
		t.Fatalf("shared: %v", err)
	}
	release(t, l)
}

func TestListAndBreak(t *testing.T) {
	clk := newFake()
	st := newTestStore(t, clk)
	ctx := context.Background()
	start := clk.Now()
	staleShared := SharedPrefix + "2020-01-01T00:00:00.000000000Z-aaaaaaaaaaaaaaaa"
	writeLock(t, st, staleShared, payload{Operation: "backup", Holder: "dead (pid 1)", AcquiredAt: start,
		ExpiresAt: start.Add(time.Minute), IsShared: true})
	writeLock(t, st, ExclusiveKey, payload{Operation: "prune", Holder: "dead (pid 2)", AcquiredAt: start,
		ExpiresAt: start.Add(time.Minute)})
	clk.Advance(5 * time.Minute)
	live, err := acquire(t, clk, st, true, "backup", testOpts(clk, "alive"))
	if err != nil {
		t.Fatal(err)
	}
	defer release(t, live)
	garbage := SharedPrefix + "zz-garbage"
	if _, err := st.Put(ctx, garbage, []byte("nope"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}

	infos, err := List(ctx, st, Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		key   string
		stale bool
		bad   bool
	}{{ExclusiveKey, true, false}, {staleShared, true, false}, {live.Info().Key, false, false}, {garbage, false, true}}
	if len(infos) != len(want) {
		t.Fatalf("list: %+v", infos)
	}
	for i, w := range want {
		got := infos[i]
		if got.Key != w.key || got.Stale != w.stale || (got.Err != nil) != w.bad {
			t.Errorf("list[%d] = %+v, want %+v", i, got, w)
		}
	}
	if infos[2].Holder != "alive (pid 1)" || infos[2].Operation != "backup" || !infos[2].IsShared {
		t.Errorf("live info %+v", infos[2])
	}

	removed, err := Break(ctx, st, true, Options{Clock: clk})
	if err != nil || len(removed) != 2 || removed[0].Key != ExclusiveKey || removed[1].Key != staleShared {
		t.Fatalf("break stale: %+v, %v", removed, err)
	}
	assertKeys(t, st, live.Info().Key, garbage)
	removed, err = Break(ctx, st, false, Options{Clock: clk})
	if err != nil || len(removed) != 2 || removed[1].Err == nil {
		t.Fatalf("break all: %+v, %v", removed, err)
	}
	assertKeys(t, st)
}

func TestWait(t *testing.T) {
	t.Run("granted after release", func(t *testing.T) {
		clk := newFake()
		st := newTestStore(t, clk)
		holder, err := acquire(t, clk, st, false, "prune", testOpts(clk, "a"))
		if err != nil {
			t.Fatal(err)
		}
		o := testOpts(clk, "b")
		o.Wait = time.Hour
		done := make(chan error, 1)
		var got *Lock
		go func() {
			var err error
			got, err = AcquireShared(context.Background(), st, "backup", o)
			done <- err
		}()
		waiting(t, clk, 3) // holder's two goroutines + the waiter's backoff
		release(t, holder)
		_, err = advanceUntil(t, clk, time.Second, func() (struct{}, error) { return struct{}{}, <-done })
		if err != nil {
			t.Fatalf("waited acquire: %v", err)
		}
		release(t, got)
	})
	t.Run("gives up after Wait", func(t *testing.T) {
		clk := newFake()
		st := newTestStore(t, clk)
		holder, err := acquire(t, clk, st, true, "backup", testOpts(clk, "a"))
		if err != nil {
			t.Fatal(err)
		}
		defer release(t, holder)
		o := testOpts(clk, "b")
		o.Wait = 20 * time.Second
		start := clk.Now()
		_, err = advanceUntil(t, clk, 100*time.Millisecond, func() (*Lock, error) {
			return AcquireExclusive(context.Background(), st, "prune", o)
		})
		if !errors.Is(err, ErrLocked) || !strings.HasPrefix(err.Error(), "repository is locked (shared) by a (pid 1)") {
			t.Fatalf("got %v", err)
		}
		if clk.Now().Sub(start) < o.Wait {
			t.Fatalf("gave up after %v of fake time, want >= %v", clk.Now().Sub(start), o.Wait)
		}
	})
	for _, shared := range []bool{true, false} {
		t.Run("a request that timed out is waited out/"+kindName(shared), func(t *testing.T) {
			clk := newFake()
			st := newTestStore(t, clk)
			var hung atomic.Bool
			st.hook = func(ctx context.Context, op, key string) error {
				if op == "put" && hung.CompareAndSwap(false, true) {
					<-ctx.Done() // the first write goes unanswered
					return ctx.Err()
				}
				return nil
			}
			o := testOpts(clk, "b")
			o.RequestTimeout = 50 * time.Millisecond
			if _, err := acquire(t, clk, st, shared, "op", o); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("without -lock-wait: %v, want the request's timeout", err)
			}
			hung.Store(false)
			o.Wait = time.Minute
			l, err := acquire(t, clk, st, shared, "op", o)
			if err != nil {
				t.Fatalf("with -lock-wait: %v, want the lock on a later attempt", err)
			}
			release(t, l)
			assertKeys(t, st)
		})
	}
	t.Run("context cancelled", func(t *testing.T) {
		clk := newFake()
		st := newTestStore(t, clk)
		holder, err := acquire(t, clk, st, false, "prune", testOpts(clk, "a"))
		if err != nil {
			t.Fatal(err)
		}
		defer release(t, holder)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		o := testOpts(clk, "b")
		o.Wait = time.Hour
		if _, err := AcquireShared(ctx, st, "backup", o); !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v", err)
		}
	})
}

// Requests per step (docs/lock.md, "Cost"): shared acquire 5 (store time,
// our key, the exclusive key, the intents, the queue), exclusive 8; a refresh rewrites
// each key once; release deletes each key (and reads the exclusive one
// first).
func TestRequestCounts(t *testing.T) {
	rows := []struct {
		shared                    bool
		acquire, refresh, release int64
	}{
		{true, 5, 1, 1},
		{false, 8, 2, 3},
	}
	for _, row := range rows {
		t.Run(kindName(row.shared), func(t *testing.T) {
			clk := newFake()
			st := newTestStore(t, clk)
			l, err := acquire(t, clk, st, row.shared, "op", testOpts(clk, "me"))
			if err != nil {
				t.Fatal(err)
			}
			if n := st.calls.Load(); n != row.acquire {
				t.Errorf("acquire: %d requests, want %d", n, row.acquire)
			}
			st.calls.Store(0)
			waiting(t, clk, 2)
			want := l.Info().ExpiresAt.Add(DefaultRefreshInterval)
			clk.Advance(DefaultRefreshInterval)
			waitFor(t, "refresh", func() bool { return !l.Info().ExpiresAt.Before(want) })
			if n := st.calls.Load(); n != row.refresh {
				t.Errorf("refresh: %d requests, want %d", n, row.refresh)
			}
			st.calls.Store(0)
			release(t, l)
			if n := st.calls.Load(); n != row.release {
				t.Errorf("release: %d requests, want %d", n, row.release)
			}
		})
	}
}

func FuzzDecodePayload(f *testing.F) {
	now := time.Date(2026, 3, 7, 9, 0, 0, 0, time.UTC)
	f.Add(payload{Operation: "backup", Holder: "h (pid 1)", AcquiredAt: now, ExpiresAt: now.Add(time.Minute), IsShared: true}.encode())
	f.Add([]byte(`{"operation":"prune","holder":"x","acquired_at":"2026-03-07T09:00:00Z","expires_at":"2026-03-07T09:01:00+02:00","is_shared":false}`))
	f.Add([]byte(`{"operation":"prune","holder":"x","acquired_at":"2026-03-07T09:00:00.5Z","expires_at":"2026-03-07T09:01:00Z"}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, _, err := decodePayload(data)
		if err != nil {
			if !errors.Is(err, ErrBadLock) {
				t.Fatalf("error %v does not wrap ErrBadLock", err)
			}
			return
		}
		again, _, err := decodePayload(p.encode())
		if err != nil {
			t.Fatalf("re-decoding our own encoding: %v", err)
		}
		if again.Operation != p.Operation || again.Holder != p.Holder || again.IsShared != p.IsShared ||
			!again.AcquiredAt.Equal(p.AcquiredAt) || !again.ExpiresAt.Equal(p.ExpiresAt) {
			t.Fatalf("round trip: %+v != %+v", again, p)
		}
	})
}
