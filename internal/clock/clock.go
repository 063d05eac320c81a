// Package clock provides an injectable source of time so that code which
// depends on wall-clock time (lock leases, retention, prune margins) can be
// tested with a fake clock instead of sleeping.
package clock

import (
	"context"
	"sync"
	"time"
)

// Clock tells the time and waits. Real code uses Real; tests use a *Fake.
type Clock interface {
	// Now returns the current wall-clock time (no monotonic reading, so a
	// machine that slept sees the jump).
	Now() time.Time
	// After returns a channel that receives once d has elapsed on the
	// monotonic clock.
	After(d time.Duration) <-chan time.Time
	// Mono returns a monotonic reading: the time elapsed since a fixed,
	// arbitrary point. It never jumps when the wall clock is set, but (on
	// Linux) it may stand still while the machine sleeps, so code timing a
	// lease looks at both Mono and Now.
	Mono() time.Duration
}

// Real is the system clock.
type Real struct{}

// realEpoch is the fixed point of Real's monotonic readings; it is set once
// when the program starts and never changes.
var realEpoch = time.Now()

// Now returns time.Now() stripped of its monotonic reading.
func (Real) Now() time.Time { return time.Now().Round(0) }

// Mono returns the monotonic time elapsed since the program started.
func (Real) Mono() time.Duration { return time.Since(realEpoch) }

// After is time.After.
func (Real) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Sleep waits for d on c, or returns ctx.Err() if ctx ends first.
func Sleep(ctx context.Context, c Clock, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-c.After(d):
		return nil
	}
}

// Fake is a manually advanced clock for tests. The zero value is not usable;
// call NewFake.
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	mono    time.Duration
	waiters []fakeWaiter
}

// fakeWaiter is a pending After: it fires when the monotonic reading
// reaches at.
type fakeWaiter struct {
	at time.Duration
	ch chan time.Time
}

// NewFake returns a fake clock set to t.
func NewFake(t time.Time) *Fake { return &Fake{now: t} }

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// After returns a channel that fires when the fake time reaches now+d.
func (f *Fake) After(d time.Duration) <-chan time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := make(chan time.Time, 1)
	at := f.mono + d
	if d <= 0 {
		ch <- f.now
		return ch
	}
	f.waiters = append(f.waiters, fakeWaiter{at: at, ch: ch})
	return ch
}

// Mono returns the fake monotonic reading: the sum of every Advance.
func (f *Fake) Mono() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mono
}

// Advance moves the fake wall and monotonic time forward by d and fires
// every timer due.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	f.now = f.now.Add(d)
	f.mono += d
	now, mono := f.now, f.mono
	kept := f.waiters[:0]
	var due []fakeWaiter
	for _, w := range f.waiters {
		if w.at <= mono {
			due = append(due, w)
		} else {
			kept = append(kept, w)
		}
	}
	f.waiters = kept
	f.mu.Unlock()
	for _, w := range due {
		w.ch <- now
	}
}

// Set jumps the fake wall-clock time to t, forward or backward, as when a
// clock is set or a machine wakes from sleep: the monotonic reading and the
// timers do not move.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	f.now = t
	f.mu.Unlock()
}

// Offset is a clock whose wall time is another clock's shifted by By (a host
// whose clock runs fast or slow); its monotonic reading and timers are the
// other clock's.
type Offset struct {
	Clock
	By time.Duration
}

// Now returns the shifted wall time.
func (o Offset) Now() time.Time { return o.Clock.Now().Add(o.By) }

// Waiters reports how many timers are pending; tests use it to wait until a
// goroutine has started waiting before advancing the clock.
func (f *Fake) Waiters() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.waiters)
}
