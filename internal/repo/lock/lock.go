package lock

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/store"
)

// Keys of the lock objects (layout as the seed).
const (
	ExclusiveKey = "index/lock.exclusive"
	SharedPrefix = "index/lock.shared/"
)

// Info describes one lock object.
type Info struct {
	Key        string
	Operation  string
	Holder     string
	AcquiredAt time.Time
	ExpiresAt  time.Time
	IsShared   bool
	// Stale: expired by our clock and, where the store reports it, not
	// written for a TTL by the store's clock.
	Stale bool
	// Err is set when the object cannot be read or parsed (for a held
	// Lock's Info: why its lease was lost).
	Err error
}

// Lock is a held lease. Its methods are safe for concurrent use.
type Lock struct {
	st     store.Store
	opts   Options
	key    string
	ctx    context.Context // the work's: ends with the caller's, on loss and on Release
	cancel context.CancelCauseFunc
	// leaseCtx is the refresher's and watchdog's: it does not end with the
	// caller's context, because the work may still be writing while it
	// stops, so the lease must be kept until Release.
	leaseCtx    context.Context
	leaseCancel context.CancelFunc
	stop        chan struct{}
	wg          sync.WaitGroup
	once        sync.Once

	mu      sync.Mutex
	p       payload // last payload written
	data    []byte  // its bytes
	version string  // its store version ("" when the store cannot tell)
	lost    error   // why the lease was lost, nil while held
}

// newLock starts the lease's refresher and watchdog.
func newLock(ctx context.Context, st store.Store, opts Options, key string, p payload, data []byte, version string) *Lock {
	lctx, cancel := context.WithCancelCause(ctx)
	leaseCtx, leaseCancel := context.WithCancel(context.WithoutCancel(ctx))
	l := &Lock{st: st, opts: opts, key: key, ctx: lctx, cancel: cancel,
		leaseCtx: leaseCtx, leaseCancel: leaseCancel, stop: make(chan struct{}),
		p: p, data: data, version: version}
	l.wg.Add(2)
	go l.refresher()
	go l.watchdog()
	return l
}

// Context is derived from the acquiring context and is cancelled, with a
// cause wrapping ErrLeaseLost that says why, when the lease is lost. Run the
// locked work under it. Release cancels it too. The lease itself is kept
// until Release, also after the acquiring context ends (Ctrl-C): work that
// is still stopping is still covered, and Release can then remove the key.
func (l *Lock) Context() context.Context { return l.ctx }

// Info describes the lock as last written.
func (l *Lock) Info() Info {
	l.mu.Lock()
	defer l.mu.Unlock()
	return infoOf(l.key, l.p, false, l.lost)
}

func infoOf(key string, p payload, stale bool, err error) Info {
	return Info{Key: key, Operation: p.Operation, Holder: p.Holder, AcquiredAt: p.AcquiredAt,
		ExpiresAt: p.ExpiresAt, IsShared: p.IsShared, Stale: stale, Err: err}
}

// Check returns nil when the lease is still valid by the wall clock with the
// safety margin and the key still holds our last write. Prune calls it before
// every batch of deletes. A failed check loses the lease.
func (l *Lock) Check(ctx context.Context) error {
	if err := l.lostErr(); err != nil {
		return err
	}
	if err := l.checkTime(); err != nil {
		return err
	}
	ours, err := l.stillOurs(ctx)
	if err != nil {
		return fmt.Errorf("checking lock %s: %w", l.key, err)
	}
	if !ours {
		return l.lose(fmt.Errorf("%w: %s was removed or replaced by another process (break-lock?)", ErrLeaseLost, l.key))
	}
	return l.checkTime()
}

// checkTime loses the lease when the wall clock is within the safety margin
// of the last expires_at.
func (l *Lock) checkTime() error {
	now := l.opts.Clock.Now()
	l.mu.Lock()
	deadline := l.p.ExpiresAt.Add(-l.opts.SafetyMargin)
	l.mu.Unlock()
	if now.Before(deadline) {
		return nil
	}
	return l.lose(fmt.Errorf("%w: %s not refreshed in time: it expires at %s, now is %s (safety margin %v; did this machine sleep?)",
		ErrLeaseLost, l.key, fmtTime(deadline.Add(l.opts.SafetyMargin)), fmtTime(now), l.opts.SafetyMargin))
}

// stillOurs tells whether the key holds our last write: by version where the
// store reports one, else by content.
func (l *Lock) stillOurs(ctx context.Context) (bool, error) {
	l.mu.Lock()
	version, data := l.version, l.data
	l.mu.Unlock()
	if version != "" {
		info, err := l.st.Stat(ctx, l.key)
		if errors.Is(err, store.ErrNotFound) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		return info.Version == version, nil
	}
	cur, err := l.st.Get(ctx, l.key)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return bytes.Equal(cur, data), nil
}

// lose records the first reason the lease was lost and cancels Context.
func (l *Lock) lose(err error) error {
	l.mu.Lock()
	if l.lost == nil {
		l.lost = err
	}
	err = l.lost
	l.mu.Unlock()
	l.cancel(err)
	l.leaseCancel() // a lost lease is never refreshed again
	return err
}

func (l *Lock) lostErr() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lost
}

// releaseAttempts bounds the tries to delete our key on Release.
const releaseAttempts = 3

// Release stops refreshing, cancels Context and deletes our key. The
// exclusive key is deleted only if it still holds our write, and neither is
// touched once the lease may have run out (others may own the key by then):
// that case returns an error wrapping ErrLeaseLost, as the key stays until
// it expires. Every Lock must be released; calling Release again does
// nothing.
func (l *Lock) Release(ctx context.Context) error {
	var err error
	l.once.Do(func() {
		close(l.stop)
		l.waitLease(ctx)
		// A lock left behind by one failed request blocks everyone else
		// until it expires: try a few times, while the lease still holds.
		for attempt := 1; ; attempt++ {
			err = l.release(ctx)
			if err == nil || errors.Is(err, ErrLeaseLost) || attempt == releaseAttempts {
				break
			}
			if clock.Sleep(ctx, l.opts.Clock, time.Duration(attempt)*l.opts.RetryInterval/10) != nil {
				break
			}
		}
		l.cancel(context.Canceled)
		l.leaseCancel()
	})
	return err
}

// waitLease waits for the refresher and watchdog to stop. A refresh still
// in flight is let finish, so that we know what the key holds, unless ctx
// ends first.
func (l *Lock) waitLease(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		l.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		l.leaseCancel()
		<-done
	}
}

func (l *Lock) release(ctx context.Context) error {
	if err := l.checkTime(); err != nil {
		// The key may already be someone else's; it expires on its own.
		return fmt.Errorf("lock %s left in place: %w", l.key, err)
	}
	if !l.p.IsShared {
		ours, err := l.stillOurs(ctx)
		if err != nil {
			return fmt.Errorf("releasing lock %s: %w", l.key, err)
		}
		if !ours {
			return nil // broken or taken over: not ours to delete
		}
	}
	if err := l.st.Delete(ctx, l.key); err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("releasing lock %s: %w", l.key, err)
	}
	return nil
}
