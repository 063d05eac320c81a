package lock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

var errInjected = errors.New("injected fault")

// testStore wraps the real local store for the faults and observations the
// tests need: the store's clock follows a fake clock (plus skew), declared
// capabilities can be masked, Puts can be made to fail, requests are counted.
type testStore struct {
	store.Store
	clk      *clock.Fake // nil: report the local store's own ModTime
	skew     time.Duration
	caps     *store.Capabilities // declared instead of the local store's (masks conditional writes)
	failPuts atomic.Bool
	calls    atomic.Int64
	puts     atomic.Int64
	// coarse makes versions "<size>-<mtime seconds>", as SFTP's are.
	coarse bool
	// hook, when set, runs before every request with its operation and key;
	// an error it returns fails the request. Tests use it to pause one
	// process at a chosen point (who(ctx) names the process).
	hook func(ctx context.Context, op, key string) error

	mu     sync.Mutex
	stamps map[string]time.Time
}

func newTestStore(t *testing.T, clk *clock.Fake) *testStore {
	t.Helper()
	return &testStore{Store: local.New(t.TempDir()), clk: clk, stamps: map[string]time.Time{}}
}

func (s *testStore) Capabilities() store.Capabilities {
	if s.caps != nil {
		return *s.caps
	}
	return s.Store.Capabilities()
}

func (s *testStore) stamp(info store.ObjectInfo) store.ObjectInfo {
	if s.clk != nil {
		s.mu.Lock()
		info.ModTime = s.stamps[info.Key]
		s.mu.Unlock()
	}
	if s.coarse {
		info.Version = fmt.Sprintf("%x-%x", info.Size, info.ModTime.Unix())
	}
	return info
}

// before counts a request and runs the hook.
func (s *testStore) before(ctx context.Context, op, key string) error {
	s.calls.Add(1)
	if s.hook != nil {
		return s.hook(ctx, op, key)
	}
	return nil
}

// whoKey is the context key naming the process a request belongs to.
type whoKey struct{}

// as names the process behind ctx's requests.
func as(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, whoKey{}, name)
}

// who names the process behind a request ("" when unnamed).
func who(ctx context.Context) string {
	name, _ := ctx.Value(whoKey{}).(string) // unnamed: ""
	return name
}

// Now is the fake clock plus skew: the store's clock.
func (s *testStore) Now(ctx context.Context) (time.Time, error) {
	if err := s.before(ctx, "now", ""); err != nil {
		return time.Time{}, err
	}
	if s.clk == nil {
		return s.Store.Now(ctx)
	}
	return s.clk.Now().Add(s.skew), nil
}

func (s *testStore) Get(ctx context.Context, key string, max int64) ([]byte, error) {
	if err := s.before(ctx, "get", key); err != nil {
		return nil, err
	}
	return s.Store.Get(ctx, key, max)
}

func (s *testStore) Put(ctx context.Context, key string, data []byte, opts store.PutOptions) (store.ObjectInfo, error) {
	if err := s.before(ctx, "put", key); err != nil {
		return store.ObjectInfo{}, err
	}
	s.puts.Add(1)
	if s.failPuts.Load() {
		return store.ObjectInfo{}, errInjected
	}
	info, err := s.Store.Put(ctx, key, data, opts)
	if err != nil || s.clk == nil {
		return info, err
	}
	s.mu.Lock()
	s.stamps[key] = s.clk.Now().Add(s.skew)
	s.mu.Unlock()
	return s.stamp(info), nil
}

func (s *testStore) Stat(ctx context.Context, key string) (store.ObjectInfo, error) {
	if err := s.before(ctx, "stat", key); err != nil {
		return store.ObjectInfo{}, err
	}
	info, err := s.Store.Stat(ctx, key)
	if err != nil {
		return info, err
	}
	return s.stamp(info), nil
}

func (s *testStore) List(ctx context.Context, prefix string, fn func(store.ObjectInfo) error) error {
	if err := s.before(ctx, "list", prefix); err != nil {
		return err
	}
	return s.Store.List(ctx, prefix, func(info store.ObjectInfo) error { return fn(s.stamp(info)) })
}

func (s *testStore) Delete(ctx context.Context, key string) error {
	if err := s.before(ctx, "delete", key); err != nil {
		return err
	}
	return s.Store.Delete(ctx, key)
}

// fakeStart is the fake clock's start: today's real time, so that nothing
// looks decades old.
func newFake() *clock.Fake { return clock.NewFake(time.Now().UTC().Truncate(time.Second)) }

// opts are test options for holder name host.
func testOpts(clk clock.Clock, host string) Options {
	return Options{Clock: clk, Hostname: host, PID: 1}
}

// waitFor polls cond until it holds (it waits on goroutines, it measures
// nothing); it fails the test after a generous bound.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// waiting waits until n timers are pending on clk (the lock's refresher and
// watchdog are asleep).
func waiting(t *testing.T, clk *clock.Fake, n int) {
	t.Helper()
	waitFor(t, "lock goroutines to wait on the clock", func() bool { return clk.Waiters() >= n })
}

// advanceUntil advances clk in small steps until fn returns, for acquires
// that sleep on the clock (settle delay, backoff).
func advanceUntil[T any](t *testing.T, clk *clock.Fake, step time.Duration, fn func() (T, error)) (T, error) {
	t.Helper()
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := fn()
		done <- result{v, err}
	}()
	for {
		select {
		case r := <-done:
			return r.v, r.err
		case <-time.After(time.Millisecond):
			clk.Advance(step)
		}
	}
}

// acquire takes a lock of the given kind, advancing the clock while the
// acquire runs (it may pause on the clock after contention): 10 ms of fake
// time per millisecond, slow enough that no lease runs out meanwhile.
func acquire(t *testing.T, clk *clock.Fake, st store.Store, shared bool, op string, o Options) (*Lock, error) {
	t.Helper()
	return advanceUntil(t, clk, 10*time.Millisecond, func() (*Lock, error) {
		if shared {
			return AcquireShared(context.Background(), st, op, o)
		}
		return AcquireExclusive(context.Background(), st, op, o)
	})
}

// writeLock writes a payload directly, as a holder that then crashed would
// have left it.
func writeLock(t *testing.T, st store.Store, key string, p payload) {
	t.Helper()
	if _, err := st.Put(context.Background(), key, p.encode(), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
}

func release(t *testing.T, l *Lock) {
	t.Helper()
	if err := l.Release(context.Background()); err != nil {
		t.Fatalf("release: %v", err)
	}
}

// keyNames lists the keys l holds, in the order List reports them
// (exclusive key, intent, shared key).
func keyNames(l *Lock) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var names []string
	for _, k := range l.keys {
		names = append(names, k.key)
	}
	return names
}
