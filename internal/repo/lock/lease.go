package lock

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cloudstic/cloudstic/internal/store"
)

// errLostNow marks a refresh failure that loses the lease at once (the key
// was removed or replaced) instead of being retried.
type errLostNow struct{ err error }

func (e *errLostNow) Error() string { return e.err.Error() }
func (e *errLostNow) Unwrap() error { return e.err }

// refresher rewrites the key every RefreshInterval; a failure is retried
// after RetryInterval and the third consecutive one loses the lease.
func (l *Lock) refresher() {
	defer l.wg.Done()
	clk := l.opts.Clock
	next := clk.Now().Add(l.opts.RefreshInterval)
	failures := 0
	for {
		if !l.sleepUntil(next) {
			return
		}
		// A lease that ran out (the machine slept) must not be revived:
		// others may already have judged it stale and started.
		if l.checkTime() != nil {
			return
		}
		err := l.refresh(l.leaseCtx)
		if err == nil {
			failures = 0
			next = clk.Now().Add(l.opts.RefreshInterval)
			continue
		}
		if l.leaseCtx.Err() != nil {
			return
		}
		var now *errLostNow
		if errors.As(err, &now) {
			l.lose(err)
			return
		}
		failures++
		if failures >= maxRefreshFailures {
			l.lose(fmt.Errorf("%w: %s: %d consecutive refreshes failed, last: %w", ErrLeaseLost, l.key, failures, err))
			return
		}
		next = clk.Now().Add(l.opts.RetryInterval)
	}
}

// sleepUntil waits, in steps of at most watchTick, until the wall clock
// reaches t. It returns false when the lock is released or its context ends.
func (l *Lock) sleepUntil(t time.Time) bool {
	for {
		d := t.Sub(l.opts.Clock.Now())
		if d <= 0 {
			return true
		}
		select {
		case <-l.stop:
			return false
		case <-l.leaseCtx.Done():
			return false
		case <-l.opts.Clock.After(min(d, watchTick)):
		}
	}
}

// watchdog compares the wall clock with the last expires_at and loses the
// lease SafetyMargin before it, whatever the refresher is doing (a refresh
// may hang; a laptop may sleep through several refresh periods).
func (l *Lock) watchdog() {
	defer l.wg.Done()
	for {
		if l.checkTime() != nil {
			return
		}
		select {
		case <-l.stop:
			return
		case <-l.leaseCtx.Done():
			return
		case <-l.opts.Clock.After(watchTick):
		}
	}
}

// refresh rewrites the key with expires_at one TTL from now: compare-and-swap
// on our last version where the store can, else read, compare and overwrite.
func (l *Lock) refresh(ctx context.Context) error {
	l.mu.Lock()
	p, version, old := l.p, l.version, l.data
	l.mu.Unlock()
	before := l.opts.Clock.Now()
	p.ExpiresAt = before.Add(l.opts.TTL)
	data := p.encode()

	opts := store.PutOptions{}
	if l.st.Capabilities().CompareAndSwap && version != "" {
		opts.IfVersion = version
	} else {
		cur, err := l.st.Get(ctx, l.key)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return &errLostNow{fmt.Errorf("%w: %s was removed (break-lock?)", ErrLeaseLost, l.key)}
		case err != nil:
			return err
		case !bytes.Equal(cur, old):
			return &errLostNow{fmt.Errorf("%w: %s now holds another process's lock", ErrLeaseLost, l.key)}
		}
	}
	info, err := l.st.Put(ctx, l.key, data, opts)
	if errors.Is(err, store.ErrVersionMismatch) || errors.Is(err, store.ErrNotFound) {
		return &errLostNow{fmt.Errorf("%w: %s was removed or taken over (break-lock?): %w", ErrLeaseLost, l.key, err)}
	}
	if err != nil {
		return err
	}
	if err := checkSkew(l.key, before, l.opts.Clock.Now(), info.ModTime, l.opts.MaxClockSkew); err != nil {
		return &errLostNow{fmt.Errorf("%w: %w", ErrLeaseLost, err)}
	}
	l.mu.Lock()
	l.p, l.data, l.version = p, data, info.Version
	l.mu.Unlock()
	return nil
}

// checkSkew compares the store's time of a write with our clock readings
// around it.
func checkSkew(key string, before, after, storeTime time.Time, limit time.Duration) error {
	if storeTime.IsZero() {
		return nil
	}
	if storeTime.Before(before.Add(-limit)) || storeTime.After(after.Add(limit)) {
		return skewError(key, after, storeTime, limit)
	}
	return nil
}
