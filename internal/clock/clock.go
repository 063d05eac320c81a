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
	// After returns a channel that receives once d has elapsed.
	After(d time.Duration) <-chan time.Time
}

// Real is the system clock.
type Real struct{}

// Now returns time.Now() stripped of its monotonic reading.
func (Real) Now() time.Time { return time.Now().Round(0) }

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
	waiters []fakeWaiter
}

type fakeWaiter struct {
	at time.Time
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
	at := f.now.Add(d)
	if d <= 0 {
		ch <- f.now
		return ch
	}
	f.waiters = append(f.waiters, fakeWaiter{at: at, ch: ch})
	return ch
}

// Advance moves the fake time forward by d and fires every timer due.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	f.now = f.now.Add(d)
	now := f.now
	kept := f.waiters[:0]
	var due []fakeWaiter
	for _, w := range f.waiters {
		if !w.at.After(now) {
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

// Set jumps the fake time to t (forward or backward) and fires due timers.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	d := t.Sub(f.now)
	f.mu.Unlock()
	if d >= 0 {
		f.Advance(d)
		return
	}
	f.mu.Lock()
	f.now = t
	f.mu.Unlock()
}

// Waiters reports how many timers are pending; tests use it to wait until a
// goroutine has started waiting before advancing the clock.
func (f *Fake) Waiters() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.waiters)
}
