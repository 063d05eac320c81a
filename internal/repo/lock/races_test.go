package lock

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/store"
)

// Each test here fails on the seed-derived protocol that ran before the
// intents and the store clock (see docs/lock.md, "What v2 closes").

// Locks written by other implementations of the seed's layout: the key
// decides the kind, is_shared may be missing, times in any RFC 3339 form.
func TestSeedWritersLocksHonoured(t *testing.T) {
	rows := []struct{ name, json string }{
		{"no is_shared", `{"operation":"prune","holder":"other (pid 4)","acquired_at":"%s","expires_at":"%s"}`},
		{"is_shared false", `{"operation":"prune","holder":"other (pid 4)","acquired_at":"%s","expires_at":"%s","is_shared":false}`},
	}
	layouts := []string{time.RFC3339, "2006-01-02T15:04:05.000Z07:00", "2006-01-02T15:04:05+02:00"}
	for _, row := range rows {
		for _, layout := range layouts {
			t.Run(row.name+"/"+layout, func(t *testing.T) {
				clk := newFake()
				st := newTestStore(t, clk)
				now := clk.Now()
				loc := time.FixedZone("+02", 2*3600)
				data := []byte(strings.Replace(strings.Replace(row.json, "%s", now.In(loc).Format(layout), 1),
					"%s", now.Add(time.Minute).In(loc).Format(layout), 1))
				if _, err := st.Put(context.Background(), ExclusiveKey, data, store.PutOptions{}); err != nil {
					t.Fatal(err)
				}
				infos, err := List(context.Background(), st, Options{Clock: clk})
				if err != nil || len(infos) != 1 || infos[0].Err != nil || infos[0].Holder != "other (pid 4)" || infos[0].Stale {
					t.Fatalf("list: %+v, %v", infos, err)
				}
				for _, shared := range []bool{true, false} {
					_, err := acquire(t, clk, st, shared, "op", testOpts(clk, "me"))
					if !errors.Is(err, ErrLocked) || errors.Is(err, ErrBadLock) || !strings.Contains(err.Error(), "exclusively locked by other (pid 4)") {
						t.Fatalf("shared=%t, live: got %v, want held by other", shared, err)
					}
				}
				clk.Advance(DefaultTTL + 2*modTimeResolution)
				l, err := acquire(t, clk, st, false, "prune", testOpts(clk, "me"))
				if err != nil {
					t.Fatalf("stale: %v", err)
				}
				release(t, l)
			})
		}
	}
}

// A store whose versions are coarse (SFTP: size and a 1-second mtime) does
// not declare compare-and-swap, and a holder checks its key by content: a
// same-size write by another process in the same second is noticed.
func TestCoarseVersionsNotTrusted(t *testing.T) {
	clk := newFake()
	st := newTestStore(t, clk)
	st.caps = &store.Capabilities{CreateIfAbsent: true}
	st.coarse = true
	l, err := acquire(t, clk, st, false, "prune", testOpts(clk, "me"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(context.Background()) //nolint:errcheck // the lease is lost on purpose
	// Another process (a break-lock and a new prune in the same second)
	// writes a lock of exactly the same size.
	p := l.Info()
	intruder := payload{Operation: p.Operation, Holder: "xx (pid 1)", AcquiredAt: p.AcquiredAt, ExpiresAt: p.ExpiresAt,
		Nonce: randomHex()}
	if _, err := st.Put(context.Background(), ExclusiveKey, intruder.encode(), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	before, _ := st.Stat(context.Background(), ExclusiveKey) // same coarse version as ours
	if before.Version != l.keys[0].version {
		t.Fatalf("the test needs equal coarse versions: %s vs %s", before.Version, l.keys[0].version)
	}
	if err := l.Check(context.Background()); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("check after a same-second overwrite: %v, want ErrLeaseLost", err)
	}
}

// pauseAt pauses the first request of process name matching op and key
// until the returned release function is called; reached is closed when
// the request arrives.
func pauseAt(st *testStore, name, op, key string) (reached chan struct{}, release func()) {
	reached, resume := make(chan struct{}), make(chan struct{})
	var once sync.Once
	st.hook = func(ctx context.Context, gotOp, gotKey string) error {
		if who(ctx) != name || gotOp != op || gotKey != key {
			return nil
		}
		paused := false
		once.Do(func() { paused = true; close(reached) })
		if paused {
			<-resume
		}
		return nil
	}
	return reached, func() { close(resume) }
}

// Two prunes take over the same stale exclusive lock. Contender A is paused
// between judging the lock stale and replacing it; contender B runs its
// whole acquire meanwhile. Without intents B wins, and A, resuming, deletes
// or overwrites B's lock: both run. With them B sees A's intent and fails.
func TestStaleTakeoverRace(t *testing.T) {
	pausePoints := map[string]struct{ op, key string }{
		"conditional": {"put", ExclusiveKey},    // the compare-and-swap
		"create-only": {"delete", ExclusiveKey}, // between the read and the delete
		"fallback":    {"put", ExclusiveKey},    // the plain write
	}
	for _, sk := range storeKinds {
		t.Run(sk.name, func(t *testing.T) {
			clk := newFake()
			st := newTestStore(t, clk)
			st.caps = sk.caps
			start := clk.Now()
			writeLock(t, st, ExclusiveKey, payload{Operation: "prune", Holder: "dead (pid 9)", AcquiredAt: start,
				ExpiresAt: start.Add(time.Minute)})
			clk.Advance(2 * time.Minute)
			pp := pausePoints[sk.name]
			reached, resume := pauseAt(st, "A", pp.op, pp.key)
			type result struct {
				l   *Lock
				err error
			}
			aDone := make(chan result, 1)
			go func() {
				l, err := AcquireExclusive(as(context.Background(), "A"), st, "prune", testOpts(clk, "A"))
				aDone <- result{l, err}
			}()
			<-reached
			_, err := acquire(t, clk, st, false, "prune", testOpts(clk, "B"))
			if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "A (pid 1)") {
				t.Fatalf("B while A takes over: %v, want locked by A", err)
			}
			resume()
			a := <-aDone
			if a.err != nil {
				t.Fatalf("A: %v", a.err)
			}
			defer release(t, a.l)
			o, err := get(context.Background(), st, ExclusiveKey, false)
			if err != nil || o.p.Holder != "A (pid 1)" {
				t.Fatalf("exclusive key: %+v, %v; want A's", o.p, err)
			}
			assertKeys(t, st, keyNames(a.l)...) // B left nothing behind
		})
	}
}

// On a store without conditional writes, two prunes interleave: A is paused
// right after writing the exclusive key, before it looks at the shared
// locks; B's whole acquire (several tries) fails on A's intent; a backup
// arriving meanwhile waits for the contention and then fails too.
func TestNoConditionalWritesExclusiveRace(t *testing.T) {
	clk := newFake()
	st := newTestStore(t, clk)
	st.caps = &store.Capabilities{}
	reached, resume := pauseAt(st, "A", "list", SharedPrefix)
	aDone := make(chan error, 1)
	var a *Lock
	go func() {
		var err error
		a, err = AcquireExclusive(as(context.Background(), "A"), st, "prune", testOpts(clk, "A"))
		aDone <- err
	}()
	<-reached // A's intent is written; it is about to list the shared locks
	if _, err := acquire(t, clk, st, false, "prune", testOpts(clk, "B")); !errors.Is(err, ErrLocked) {
		t.Fatalf("B: %v, want ErrLocked", err)
	}
	if _, err := acquire(t, clk, st, true, "backup", testOpts(clk, "C")); !errors.Is(err, ErrLocked) {
		t.Fatalf("C: %v, want ErrLocked", err)
	}
	resume()
	if err := <-aDone; err != nil {
		t.Fatalf("A: %v", err)
	}
	defer release(t, a)
	assertKeys(t, st, keyNames(a)...)
}

// A backup that meets a prune's attempt (an intent, no exclusive lock yet)
// keeps its key and waits; the prune sees the backup's key and backs off;
// the backup gets its lock, and the prune reports the backup as the holder.
func TestSharedOutwaitsExclusiveAttempt(t *testing.T) {
	for _, sk := range storeKinds {
		t.Run(sk.name, func(t *testing.T) {
			clk := newFake()
			st := newTestStore(t, clk)
			st.caps = sk.caps
			// The prune is paused after its intent, before its first list.
			reached, resume := pauseAt(st, "P", "list", IntentPrefix)
			pDone := make(chan error, 1)
			go func() {
				_, err := AcquireExclusive(as(context.Background(), "P"), st, "prune", testOpts(clk, "P"))
				pDone <- err
			}()
			<-reached
			sDone := make(chan error, 1)
			var s *Lock
			go func() {
				var err error
				s, err = AcquireShared(as(context.Background(), "S"), st, "backup", testOpts(clk, "S"))
				sDone <- err
			}()
			waitFor(t, "the backup to wait on the contention", func() bool { return clk.Waiters() > 0 })
			resume()
			if err := <-pDone; !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "S (pid 1)") {
				t.Fatalf("prune: %v, want locked by the backup", err)
			}
			clk.Advance(time.Second)
			if err := <-sDone; err != nil {
				t.Fatalf("backup: %v", err)
			}
			release(t, s)
			assertKeys(t, st)
		})
	}
}

// Hosts whose clocks run 2 minutes fast and 2 minutes slow share a
// repository: every judgement of expiry uses the store's clock, so nobody
// takes a live lock and a dead holder's lock is taken over a TTL after its
// last write, by any of them.
func TestSkewedHostClocks(t *testing.T) {
	base := newFake()
	st := newTestStore(t, base)
	fast := clock.Offset{Clock: base, By: 2 * time.Minute}
	slow := clock.Offset{Clock: base, By: -2 * time.Minute}
	dead := false
	var mu sync.Mutex
	st.hook = func(ctx context.Context, op, key string) error {
		mu.Lock()
		defer mu.Unlock()
		if dead && who(ctx) == "holder" {
			return errInjected // the holder's machine is gone
		}
		return nil
	}
	holder, err := acquire(t, base, st, false, "prune", Options{Clock: slow, Hostname: "slow", PID: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Release(context.Background()) //nolint:errcheck // the holder dies on purpose
	if got := holder.Info().ExpiresAt; got.Before(base.Now()) {
		t.Fatalf("expires_at %v is by the slow clock, not the store's %v", got, base.Now())
	}
	// The contenders below are refused (or granted) without pausing, so
	// they are called directly: the acquire helper would advance the fake
	// clock while they run, under load far enough for an extra refresh of
	// the holder.
	for range 4 { // 40 s: the holder refreshes, nobody may take over
		waiting(t, base, 2)
		base.Advance(DefaultRefreshInterval)
		for _, c := range []clock.Clock{fast, slow} {
			if _, err := AcquireShared(context.Background(), st, "backup", Options{Clock: c, Hostname: "other", PID: 2}); !errors.Is(err, ErrLocked) {
				t.Fatalf("while held: %v, want ErrLocked", err)
			}
		}
	}
	// Let the last refresh finish: a write still in flight when the clock
	// jumps below would land (and be stamped by the store) a minute late,
	// and rightly keep the lock live for another TTL.
	waiting(t, base, 2)
	mu.Lock()
	dead = true
	mu.Unlock()
	// The lock was last written at most one refresh ago; it is live for a
	// TTL after that by the store's clock, whatever our clocks say.
	base.Advance(DefaultTTL - DefaultRefreshInterval - time.Second)
	if _, err := AcquireExclusive(context.Background(), st, "prune", Options{Clock: fast, Hostname: "fast", PID: 3}); !errors.Is(err, ErrLocked) {
		t.Fatalf("before its TTL by the store's clock: %v, want ErrLocked", err)
	}
	base.Advance(DefaultRefreshInterval + 3*modTimeResolution)
	l, err := AcquireExclusive(context.Background(), st, "prune", Options{Clock: fast, Hostname: "fast", PID: 3})
	if err != nil {
		t.Fatalf("after the TTL: %v", err)
	}
	release(t, l)
}

// On a store without compare-and-swap a refresh reads, compares and writes.
// A break-lock between the read and the write lets prune B in; A's write
// then overwrites B's exclusive key. The recheck after the refresh sees B's
// intent and A loses its lease (B loses its own at its next refresh: both
// stop, neither goes on beside the other). Found by spin (docs/lock/model.md).
func TestRefreshRacingBreakLoses(t *testing.T) {
	for _, sk := range storeKinds[1:] { // create-only, fallback
		t.Run(sk.name, func(t *testing.T) {
			clk := newFake()
			st := newTestStore(t, clk)
			st.caps = sk.caps
			a, err := AcquireExclusive(as(context.Background(), "A"), st, "prune", testOpts(clk, "A"))
			if err != nil {
				t.Fatal(err)
			}
			defer a.Release(context.Background()) //nolint:errcheck // A loses its lease on purpose
			reached, resume := pauseAt(st, "A", "put", ExclusiveKey)
			waiting(t, clk, 2)
			clk.Advance(DefaultRefreshInterval)
			<-reached // A read its exclusive key, found it its own, and is about to write it
			st.hook = nil
			if _, err := Break(context.Background(), st, false, Options{Clock: clk}); err != nil {
				t.Fatal(err)
			}
			b, err := acquire(t, clk, st, false, "prune", testOpts(clk, "B"))
			if err != nil {
				t.Fatalf("B after the break: %v", err)
			}
			defer b.Release(context.Background()) //nolint:errcheck // B may lose its lease too
			resume()
			// A's recheck waits ContentionWait for B's intent to go.
			lost, err := advanceUntil(t, clk, 10*time.Millisecond, func() (bool, error) {
				<-a.Context().Done()
				return true, nil
			})
			if !lost || err != nil || !errors.Is(context.Cause(a.Context()), ErrLeaseLost) {
				t.Fatalf("A after overwriting B's key: %v", context.Cause(a.Context()))
			}
		})
	}
}
