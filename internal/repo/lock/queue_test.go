package lock

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/store"
)

// pending is an acquire running in the background.
type pending struct {
	done chan struct{}
	l    *Lock
	err  error
}

func start(st store.Store, shared bool, op string, o Options) *pending {
	p := &pending{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		if shared {
			p.l, p.err = AcquireShared(context.Background(), st, op, o)
		} else {
			p.l, p.err = AcquireExclusive(context.Background(), st, op, o)
		}
	}()
	return p
}

func (p *pending) finished() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// drive advances clk by step whenever n timers wait on it (the lock
// goroutines asleep, so that leases do not run out under them) until p has
// finished. Timers of released locks still count until they fire, so this
// orders nothing: the tests assert orders, never durations.
func drive(t *testing.T, clk *clock.Fake, step time.Duration, n int, p *pending) {
	t.Helper()
	for !p.finished() {
		waitFor(t, "the lock goroutines to sleep", func() bool { return p.finished() || clk.Waiters() >= n })
		if !p.finished() {
			clk.Advance(step)
		}
	}
}

// advance advances clk by d in steps of step, each once n timers wait on
// it.
func advance(t *testing.T, clk *clock.Fake, d, step time.Duration, n int) {
	t.Helper()
	for moved := time.Duration(0); moved < d; moved += step {
		waiting(t, clk, n)
		clk.Advance(step)
	}
}

func objectsUnder(t *testing.T, st store.Store, prefix string) []string {
	t.Helper()
	var keys []string
	if err := st.List(context.Background(), prefix, func(info store.ObjectInfo) error {
		keys = append(keys, info.Key)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return keys
}

func waitOpts(clk clock.Clock, host string) Options {
	o := testOpts(clk, host)
	o.Wait = time.Hour
	return o
}

// refusedByQueuedPrune: a new backup without -lock-wait is refused at once
// (no pause on the clock), naming the waiting prune.
func refusedByQueuedPrune(t *testing.T, st store.Store, clk clock.Clock, host string) {
	t.Helper()
	p := start(st, true, "backup", testOpts(clk, host))
	waitFor(t, "the refusal (without the clock moving)", p.finished)
	if !errors.Is(p.err, ErrLocked) || errors.Is(p.err, errContended) {
		t.Fatalf("backup %s: %v, want a refusal (not a contention)", host, p.err)
	}
	if msg := p.err.Error(); !strings.Contains(msg, "queued for an exclusive lock by p (pid 1) (operation: prune") {
		t.Fatalf("backup %s: %q, want it to name the waiting prune", host, msg)
	}
}

// A prune with -lock-wait keeps its place while backups hold the lock: new
// backups do not start, its intent stays live however long it waits, it
// gets the lock once the backup that held it leaves, and a backup queued
// after it gets in only after it.
func TestWaitingPruneNotStarved(t *testing.T) {
	for _, caps := range []*store.Capabilities{nil, {}} {
		name := "create-if-absent+CAS"
		if caps != nil {
			name = "neither"
		}
		t.Run(name, func(t *testing.T) {
			clk := newFake()
			st := newTestStore(t, clk)
			st.caps = caps
			holder, err := acquire(t, clk, st, true, "backup", testOpts(clk, "s0"))
			if err != nil {
				t.Fatal(err)
			}
			prune := start(st, false, "prune", waitOpts(clk, "p"))
			waitFor(t, "the prune's intent", func() bool { return len(objectsUnder(t, st, IntentPrefix)) == 1 })
			refusedByQueuedPrune(t, st, clk, "s1")
			later := start(st, true, "backup", waitOpts(clk, "s2"))
			// Three TTLs pass: the holder refreshes, the prune keeps
			// its intent live, backups keep arriving and stay out.
			for i := range 3 {
				advance(t, clk, DefaultTTL, 100*time.Millisecond, 4) // holder 2, prune, later
				refusedByQueuedPrune(t, st, clk, "s"+string(rune('3'+i)))
				if prune.finished() || later.finished() {
					t.Fatalf("while a backup holds the lock: prune done %v (%v), later backup done %v (%v)",
						prune.finished(), prune.err, later.finished(), later.err)
				}
			}
			release(t, holder)
			drive(t, clk, 10*time.Millisecond, 2, prune) // prune, later
			if prune.err != nil {
				t.Fatalf("prune: %v", prune.err)
			}
			if later.finished() {
				t.Fatalf("the backup queued after the prune finished first: %v", later.err)
			}
			release(t, prune.l)
			drive(t, clk, 10*time.Millisecond, 1, later)
			if later.err != nil {
				t.Fatalf("later backup: %v", later.err)
			}
			release(t, later.l)
			assertKeys(t, st)
		})
	}
}

// A backup with -lock-wait that a prune refused goes before a prune that
// queued after it: the second prune waits for the backup's hold.
func TestQueuedBackupBeforeLaterPrune(t *testing.T) {
	clk := newFake()
	st := newTestStore(t, clk)
	first, err := acquire(t, clk, st, false, "prune", testOpts(clk, "p1"))
	if err != nil {
		t.Fatal(err)
	}
	backup := start(st, true, "backup", waitOpts(clk, "s"))
	waitFor(t, "the backup's queue entry", func() bool { return len(objectsUnder(t, st, QueuePrefix)) == 1 })
	advance(t, clk, time.Second, 10*time.Millisecond, 3) // first 2, backup
	second := start(st, false, "prune", waitOpts(clk, "p2"))
	waitFor(t, "the second prune's queue entry", func() bool { return len(objectsUnder(t, st, QueuePrefix)) == 2 })
	release(t, first)
	drive(t, clk, 10*time.Millisecond, 2, backup) // backup, second
	if backup.err != nil {
		t.Fatalf("backup: %v", backup.err)
	}
	if second.finished() {
		t.Fatalf("the prune queued after the backup finished first: %v", second.err)
	}
	advance(t, clk, DefaultTTL, 100*time.Millisecond, 3) // a long backup (2), the prune waits
	if second.finished() {
		t.Fatalf("the prune finished while the backup held the lock: %v", second.err)
	}
	release(t, backup.l)
	drive(t, clk, 10*time.Millisecond, 1, second)
	if second.err != nil {
		t.Fatalf("second prune: %v", second.err)
	}
	release(t, second.l)
	assertKeys(t, st)
}

// A waiting prune that crashed leaves its queue entry and intent: backups
// are refused, naming it, until they are stale, then go ahead.
func TestStaleQueuedPruneDoesNotBlock(t *testing.T) {
	clk := newFake()
	st := newTestStore(t, clk)
	now := clk.Now()
	p := payload{Operation: "prune", Holder: "p (pid 1)", AcquiredAt: now, ExpiresAt: now.Add(DefaultTTL), Nonce: randomHex()}
	place := now.UTC().Format(timeLayout) + "-" + randomHex()[:8]
	writeLock(t, st, QueuePrefix+place+randomHex()[:8], p)
	writeLock(t, st, IntentPrefix+place+randomHex()[:8], p)
	clk.Advance(time.Second)
	refusedByQueuedPrune(t, st, clk, "s1")
	clk.Advance(DefaultTTL + modTimeResolution)
	l, err := acquire(t, clk, st, true, "backup", testOpts(clk, "s2"))
	if err != nil {
		t.Fatalf("after the prune's objects went stale: %v", err)
	}
	release(t, l)
}

// Queue places: earlier time first, then the ticket; names of another form
// and unreadable objects go first.
func TestQueuePlaceOrder(t *testing.T) {
	const a, b = "2026-03-07T09:00:00.000000000Z-", "2026-03-07T09:00:01.000000000Z-"
	tests := []struct {
		name string
		o    object
		ours string
		want bool
	}{
		{"earlier time", object{key: IntentPrefix + a + "ffffffff00000000"}, SharedPrefix + b + "0000000000000000", true},
		{"later time", object{key: QueuePrefix + b + "0000000000000000"}, IntentPrefix + a + "ffffffff00000000", false},
		{"same time, smaller ticket", object{key: QueuePrefix + a + "00000001ffffffff"}, IntentPrefix + a + "0000000200000000", true},
		{"same time, larger ticket", object{key: QueuePrefix + a + "00000003ffffffff"}, IntentPrefix + a + "0000000200000000", false},
		{"same time, exclusive before shared", object{key: QueuePrefix + a + "ffffffffffffffff"}, SharedPrefix + a + "0000000000000000", true},
		{"same time, shared after exclusive", object{key: QueuePrefix + a + "0000000000000000", p: payload{IsShared: true}}, IntentPrefix + a + "ffffffffffffffff", false},
		{"foreign name", object{key: IntentPrefix + "x"}, SharedPrefix + a + "0000000000000000", true},
		{"unreadable", object{key: QueuePrefix + b + "0000000000000000", bad: ErrBadLock}, IntentPrefix + a + "0000000000000000", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := before(tc.o, tc.ours); got != tc.want {
				t.Fatalf("before(%s, %s) = %v, want %v", tc.o.key, tc.ours, got, tc.want)
			}
		})
	}
}
