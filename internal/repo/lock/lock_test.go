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

// stores runs a test on the local store with its conditional writes and with
// them masked (the fallback path).
// (and with create-if-absent only).
var storeKinds = []struct {
	name string
	caps *store.Capabilities
}{
	{"conditional", nil},
	{"create-only", &store.Capabilities{CreateIfAbsent: true}},
	{"fallback", &store.Capabilities{}},
}

func TestConflictTable(t *testing.T) {
	rows := []struct {
		held, want  string // "shared" or "exclusive"
		allowed     bool
		wantMessage string
	}{
		{"shared", "shared", true, ""},
		{"shared", "exclusive", false, "repository is locked (shared) by host-a (pid 1) (operation: backup, acquired: "},
		{"exclusive", "shared", false, "repository is exclusively locked by host-a (pid 1) (operation: prune, acquired: "},
		{"exclusive", "exclusive", false, "repository is exclusively locked by host-a (pid 1) (operation: prune, acquired: "},
	}
	for _, sk := range storeKinds {
		for _, row := range rows {
			t.Run(sk.name+"/"+row.held+"-then-"+row.want, func(t *testing.T) {
				clk := newFake()
				st := newTestStore(t, clk)
				st.caps = sk.caps
				op := map[string]string{"shared": "backup", "exclusive": "prune"}
				first, err := acquire(t, clk, st, row.held == "shared", op[row.held], testOpts(clk, "host-a"))
				if err != nil {
					t.Fatalf("first acquire: %v", err)
				}
				defer release(t, first)
				second, err := acquire(t, clk, st, row.want == "shared", op[row.want], testOpts(clk, "host-b"))
				if row.allowed {
					if err != nil {
						t.Fatalf("second acquire: %v", err)
					}
					release(t, second)
					return
				}
				if !errors.Is(err, ErrLocked) {
					t.Fatalf("second acquire: got %v, want ErrLocked", err)
				}
				if !strings.HasPrefix(err.Error(), row.wantMessage) || !strings.Contains(err.Error(), ", expires: ") {
					t.Fatalf("message %q, want prefix %q", err, row.wantMessage)
				}
				assertKeys(t, st, keyNames(first)...) // the loser left nothing behind
			})
		}
	}
}

// assertKeys checks the lock objects in st are exactly want.
func assertKeys(t *testing.T, st *testStore, want ...string) {
	t.Helper()
	infos, err := List(context.Background(), st, Options{Clock: st.clk})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, i := range infos {
		got = append(got, i.Key)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("lock keys %v, want %v", got, want)
	}
}

func TestStaleLocksIgnoredAndTakenOver(t *testing.T) {
	rows := []struct {
		name      string
		staleKind string // kind of the crashed holder's lock
		want      string
	}{
		{"stale exclusive, shared acquire", "exclusive", "shared"},
		{"stale exclusive, exclusive takeover", "exclusive", "exclusive"},
		{"stale shared, exclusive acquire", "shared", "exclusive"},
	}
	for _, sk := range storeKinds {
		for _, row := range rows {
			t.Run(sk.name+"/"+row.name, func(t *testing.T) {
				clk := newFake()
				st := newTestStore(t, clk)
				st.caps = sk.caps
				key := ExclusiveKey
				if row.staleKind == "shared" {
					key = SharedPrefix + "2020-01-01T00:00:00.000000000Z-0123456789abcdef"
				}
				start := clk.Now()
				writeLock(t, st, key, payload{Operation: "crashed", Holder: "dead (pid 9)", AcquiredAt: start,
					ExpiresAt: start.Add(time.Minute), IsShared: row.staleKind == "shared"})

				// Within the TTL the crashed holder still blocks.
				clk.Advance(50 * time.Second)
				if _, err := acquire(t, clk, st, row.want == "shared", "op", testOpts(clk, "me")); !errors.Is(err, ErrLocked) {
					t.Fatalf("before expiry: got %v, want ErrLocked", err)
				}
				clk.Advance(70 * time.Second)
				l, err := acquire(t, clk, st, row.want == "shared", "op", testOpts(clk, "me"))
				if err != nil {
					t.Fatalf("after expiry: %v", err)
				}
				defer release(t, l)
				if row.want == "exclusive" && row.staleKind == "exclusive" {
					o, err := get(context.Background(), st, ExclusiveKey, false)
					if err != nil || o.p.Holder != "me (pid 1)" {
						t.Fatalf("exclusive key holds %+v, %v; want our lock", o.p, err)
					}
				}
			})
		}
	}
}

// A lock whose expires_at has passed by our clock but which the store says
// was written moments ago (its holder's clock runs slow) is not stale.
func TestStoreClockKeepsFreshLockLive(t *testing.T) {
	clk := newFake()
	st := newTestStore(t, clk)
	now := clk.Now()
	writeLock(t, st, ExclusiveKey, payload{Operation: "prune", Holder: "slow-clock (pid 2)",
		AcquiredAt: now.Add(-3 * time.Minute), ExpiresAt: now.Add(-2 * time.Minute)})
	for _, shared := range []bool{true, false} {
		if _, err := acquire(t, clk, st, shared, "op", testOpts(clk, "me")); !errors.Is(err, ErrLocked) {
			t.Fatalf("shared=%t: got %v, want ErrLocked", shared, err)
		}
	}
}

func TestRefreshExtendsExpiry(t *testing.T) {
	for _, sk := range storeKinds {
		for _, shared := range []bool{true, false} {
			t.Run(sk.name+"/"+kindName(shared), func(t *testing.T) {
				clk := newFake()
				st := newTestStore(t, clk)
				st.caps = sk.caps
				l, err := acquire(t, clk, st, shared, "op", testOpts(clk, "me"))
				if err != nil {
					t.Fatal(err)
				}
				defer release(t, l)
				for i := range 4 { // four periods: well past the first TTL
					want := l.Info().ExpiresAt.Add(DefaultRefreshInterval)
					waiting(t, clk, 2)
					clk.Advance(DefaultRefreshInterval)
					waitFor(t, "refresh", func() bool { return !l.Info().ExpiresAt.Before(want) })
					o, err := get(context.Background(), st, l.Info().Key, shared)
					if err != nil || !o.p.ExpiresAt.Equal(l.Info().ExpiresAt) {
						t.Fatalf("refresh %d: stored %v, %v; want expires %v", i, o.p.ExpiresAt, err, l.Info().ExpiresAt)
					}
				}
				if err := l.Check(context.Background()); err != nil {
					t.Fatalf("check after refreshes: %v", err)
				}
				if l.Context().Err() != nil {
					t.Fatal("context cancelled while refreshing fine")
				}
			})
		}
	}
}

// Failed refreshes are retried until the lease's safe end, where the
// watchdog loses the lease and cancels the work: TTL minus safety margin
// after the last successful write was sent, never later.
func TestRefreshFailuresCancelContext(t *testing.T) {
	for _, shared := range []bool{true, false} {
		t.Run(kindName(shared), func(t *testing.T) {
			clk := newFake()
			st := newTestStore(t, clk)
			l, err := acquire(t, clk, st, shared, "op", testOpts(clk, "me"))
			if err != nil {
				t.Fatal(err)
			}
			defer l.Release(context.Background()) //nolint:errcheck // the lease is lost on purpose
			sent := l.at
			st.failPuts.Store(true)
			puts := st.puts.Load()
			safeEnd := DefaultTTL - DefaultSafetyMargin
			for l.Context().Err() == nil {
				if sent.elapsed(clk) > safeEnd {
					// The watchdog's timer for the safe end has fired: it
					// must end the lease without more time passing.
					waitFor(t, "the watchdog to end the lease at its safe end", func() bool { return l.Context().Err() != nil })
					break
				}
				waiting(t, clk, 1)
				clk.Advance(500 * time.Millisecond)
				waitFor(t, "the watchdog", func() bool { return l.Context().Err() != nil || clk.Waiters() >= 1 })
			}
			if tries := st.puts.Load() - puts; tries < 3 {
				t.Fatalf("%d refresh attempts before the safe end, want at least 3", tries)
			}
			cause := context.Cause(l.Context())
			if !errors.Is(cause, ErrLeaseLost) || !strings.Contains(cause.Error(), "not refreshed in time") {
				t.Fatalf("cause %v", cause)
			}
			if !errors.Is(l.Check(context.Background()), ErrLeaseLost) {
				t.Fatal("Check passes after lease loss")
			}
		})
	}
}

// Someone breaks the lock (or takes it over) while we run: the next refresh
// or Check notices and cancels the work.
func TestLeaseLostWhenBroken(t *testing.T) {
	for _, sk := range storeKinds {
		for _, shared := range []bool{true, false} {
			for _, via := range []string{"refresh", "check"} {
				t.Run(sk.name+"/"+kindName(shared)+"/"+via, func(t *testing.T) {
					clk := newFake()
					st := newTestStore(t, clk)
					st.caps = sk.caps
					l, err := acquire(t, clk, st, shared, "op", testOpts(clk, "me"))
					if err != nil {
						t.Fatal(err)
					}
					defer release(t, l)
					if removed, err := Break(context.Background(), st, false, Options{Clock: clk}); err != nil || len(removed) != len(l.keys) {
						t.Fatalf("break: %v, %v", removed, err)
					}
					if via == "check" {
						if err := l.Check(context.Background()); !errors.Is(err, ErrLeaseLost) {
							t.Fatalf("check: %v", err)
						}
					} else {
						waiting(t, clk, 2)
						clk.Advance(DefaultRefreshInterval)
					}
					<-l.Context().Done()
					if cause := context.Cause(l.Context()); !errors.Is(cause, ErrLeaseLost) || !strings.Contains(cause.Error(), "break-lock") {
						t.Fatalf("cause %v", cause)
					}
				})
			}
		}
	}
}

// Taken over by another prune after a break: our refresh must not overwrite
// the new holder, and our release must not delete its key.
func TestBrokenThenTakenOverIsNotClobbered(t *testing.T) {
	clk := newFake()
	st := newTestStore(t, clk)
	old, err := acquire(t, clk, st, false, "prune", testOpts(clk, "old"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Break(context.Background(), st, false, Options{Clock: clk}); err != nil {
		t.Fatal(err)
	}
	next, err := acquire(t, clk, st, false, "prune", testOpts(clk, "new"))
	if err != nil {
		t.Fatal(err)
	}
	defer release(t, next)
	waiting(t, clk, 4)
	clk.Advance(DefaultRefreshInterval)
	<-old.Context().Done()
	release(t, old)
	o, err := get(context.Background(), st, ExclusiveKey, false)
	if err != nil || !o.present || o.p.Holder != "new (pid 1)" {
		t.Fatalf("exclusive key: %+v %v, want the new holder's", o.p, err)
	}
}

// A laptop that slept past its lease notices by the wall clock and does not
// revive the lease with a late refresh.
func TestLeaseLostByWallClockJump(t *testing.T) {
	for _, shared := range []bool{true, false} {
		t.Run(kindName(shared), func(t *testing.T) {
			clk := newFake()
			st := newTestStore(t, clk)
			l, err := acquire(t, clk, st, shared, "op", testOpts(clk, "laptop"))
			if err != nil {
				t.Fatal(err)
			}
			expires := l.Info().ExpiresAt
			waiting(t, clk, 2)
			clk.Set(expires.Add(time.Hour))
			clk.Advance(watchTick) // the watchdog's next look
			<-l.Context().Done()
			if cause := context.Cause(l.Context()); !errors.Is(cause, ErrLeaseLost) || !strings.Contains(cause.Error(), "sleep") {
				t.Fatalf("cause %v", cause)
			}
			o, err := get(context.Background(), st, l.Info().Key, shared)
			if err != nil || !o.p.ExpiresAt.Equal(expires) {
				t.Fatalf("stored expiry %v (%v), want unchanged %v", o.p.ExpiresAt, err, expires)
			}
			// The key may be someone else's by now: Release leaves it
			// and says so.
			if err := l.Release(context.Background()); !errors.Is(err, ErrLeaseLost) {
				t.Fatalf("release after the lease ran out: %v, want ErrLeaseLost", err)
			}
			if o, err := get(context.Background(), st, l.Info().Key, shared); err != nil || !o.present {
				t.Fatalf("release removed the key of a lease that ran out (%v)", err)
			}
		})
	}
}

func TestCheckAndOptions(t *testing.T) {
	clk := newFake()
	st := newTestStore(t, clk)
	l, err := acquire(t, clk, st, false, "prune", testOpts(clk, "me"))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Check(context.Background()); err != nil {
		t.Fatalf("fresh lock: %v", err)
	}
	release(t, l)
	assertKeys(t, st)

	bad := []Options{
		{SafetyMargin: 5 * time.Second},
		{TTL: 20 * time.Second},
		{RefreshInterval: 50 * time.Second},
		{RequestTimeout: 15 * time.Second},
		{MaxClockSkew: 25 * time.Second},
		{Wait: -time.Second},
	}
	for _, o := range bad {
		o.Clock = clk
		if _, err := AcquireShared(context.Background(), st, "backup", o); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
}

// An exclusive holder whose intent's refresh fails after its exclusive key
// was rewritten remembers the key's new version: the retry succeeds instead
// of losing the lease on a compare-and-swap against the old version.
func TestPartialRefreshKeepsNewVersion(t *testing.T) {
	clk := newFake()
	st := newTestStore(t, clk)
	l, err := acquire(t, clk, st, false, "prune", testOpts(clk, "me"))
	if err != nil {
		t.Fatal(err)
	}
	defer release(t, l)
	var failed atomic.Bool
	st.hook = func(_ context.Context, op, key string) error {
		if op == "put" && isIntent(key) && failed.CompareAndSwap(false, true) {
			return errInjected // the first intent refresh fails
		}
		return nil
	}
	waiting(t, clk, 2)
	clk.Advance(DefaultRefreshInterval)
	waitFor(t, "the failed refresh", failed.Load)
	want := l.Info().ExpiresAt
	waiting(t, clk, 2)
	clk.Advance(DefaultRetryInterval)
	waitFor(t, "the retry", func() bool { return l.Context().Err() != nil || l.Info().ExpiresAt.After(want) })
	if err := l.Check(context.Background()); err != nil {
		t.Fatalf("after a partial refresh and its retry: %v", err)
	}
}
