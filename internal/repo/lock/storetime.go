package lock

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/store"
)

// storeClock estimates the store's clock from lower-bound samples: a sample
// (t, m) says the store's clock read at least t at our monotonic instant m
// (a Put's ModTime or the store's Now, read when the answer arrived). Its
// estimate is a lower bound too, so expiry judged by it is never early.
// It advances with our monotonic clock, which can only make it lag (the
// machine slept), never lead.
type storeClock struct {
	clk clock.Clock

	mu   sync.Mutex
	ok   bool
	base time.Time // the best sample's t minus its m: estimate = base + mono
}

func newStoreClock(clk clock.Clock) *storeClock { return &storeClock{clk: clk} }

// observe records that the store's clock read at least t just now.
func (c *storeClock) observe(t time.Time) {
	if t.IsZero() {
		return
	}
	base := t.Add(-c.clk.Mono())
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ok || base.After(c.base) {
		c.base, c.ok = base, true
	}
}

// now returns the lower bound of the store's current time, and false before
// any sample.
func (c *storeClock) now() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ok {
		return time.Time{}, false
	}
	return c.base.Add(c.clk.Mono()), true
}

// sample asks the store for its time unless a sample exists.
func (c *storeClock) sample(ctx context.Context, st store.Store) error {
	if _, ok := c.now(); ok {
		return nil
	}
	t, err := st.Now(ctx)
	if err != nil {
		return fmt.Errorf("reading the store's clock: %w", err)
	}
	c.observe(t)
	return nil
}

// mustNow is now for callers that sampled first.
func (c *storeClock) mustNow() time.Time {
	t, ok := c.now()
	if !ok {
		panic("lock: store clock used before it was sampled")
	}
	return t
}

// anchor is the moment a write was sent, on both of our clocks.
type anchor struct {
	mono time.Duration
	wall time.Time
}

func anchorNow(clk clock.Clock) anchor { return anchor{mono: clk.Mono(), wall: clk.Now()} }

// elapsed since the anchor: the larger of the monotonic and the wall-clock
// reading, so that neither a wall clock set back nor a sleeping machine (whose
// monotonic clock stands still) lengthens a lease.
func (a anchor) elapsed(clk clock.Clock) time.Duration {
	return max(clk.Mono()-a.mono, clk.Now().Sub(a.wall))
}

// isStale judges an object by the store's clock: stale once the store's time
// (lower bound lb) is a TTL past its last write (modTime, up to one
// resolution step late) and past its expires_at. Without a modification
// time only expires_at counts, with the clock-skew tolerance.
func isStale(p payload, modTime, lb time.Time, o Options) bool {
	if modTime.IsZero() {
		return lb.After(p.ExpiresAt.Add(o.MaxClockSkew))
	}
	return lb.After(modTime.Add(modTimeResolution+o.TTL)) && lb.After(p.ExpiresAt)
}
