package lock

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cloudstic/cloudstic/internal/store"
)

// errLostNow marks a refresh failure that loses the lease at once (a key
// was removed or replaced) instead of being retried.
type errLostNow struct{ err error }

func (e *errLostNow) Error() string { return e.err.Error() }
func (e *errLostNow) Unwrap() error { return e.err }

// refresher rewrites the keys every RefreshInterval; a failure is retried
// after RetryInterval until the lease's safe end, where the watchdog ends
// it.
func (l *Lock) refresher() {
	defer l.wg.Done()
	wait := l.opts.RefreshInterval
	for {
		if !l.sleep(wait) {
			return
		}
		// A lease past its safe end (the machine slept) must not be
		// revived: others may already have judged it stale and started.
		if l.valid() != nil {
			return
		}
		err := l.refresh(l.leaseCtx)
		if err == nil {
			wait = l.opts.RefreshInterval
			continue
		}
		if l.leaseCtx.Err() != nil {
			return
		}
		var now *errLostNow
		if errors.As(err, &now) {
			_ = l.lose(err) // recorded: the holder's context ends with it
			return
		}
		wait = l.opts.RetryInterval
	}
}

// sleep waits d on the lock's clock. It returns false when the lock is
// released or its lease context ends.
func (l *Lock) sleep(d time.Duration) bool {
	select {
	case <-l.stop:
		return false
	case <-l.leaseCtx.Done():
		return false
	case <-l.opts.Clock.After(d):
		return true
	}
}

// watchdog ends the lease at its safe end, whatever the refresher is doing
// (a refresh may hang; a laptop may sleep through several refresh periods:
// it wakes at least every watchTick to read the wall clock too).
func (l *Lock) watchdog() {
	defer l.wg.Done()
	for {
		if l.valid() != nil {
			return
		}
		if !l.sleep(min(max(l.remaining(), 0), watchTick)) {
			return
		}
	}
}

// refresh rewrites every key with expires_at one TTL past the store's time,
// the intent before the exclusive key (the order docs/lock/lock.pml
// proves). On stores without compare-and-swap it then looks again for
// others before the lease counts as extended (recheck). The lease's new
// anchor is the moment the first rewrite was sent, once all succeeded.
func (l *Lock) refresh(ctx context.Context) error {
	at, err := l.rewriteKeys(ctx)
	if err != nil {
		return err
	}
	if !l.caps.CompareAndSwap {
		if err := l.recheck(ctx); err != nil {
			return err
		}
	}
	l.mu.Lock()
	l.at = at
	l.mu.Unlock()
	l.trace(TraceRenewed, "")
	return nil
}

// rewriteKeys rewrites every key, the intent first, and returns when the
// first rewrite was sent. A Check that overlaps it waits for its end (see
// Lock.rewrites).
func (l *Lock) rewriteKeys(ctx context.Context) (anchor, error) {
	l.rewriting.Lock()
	defer l.rewriting.Unlock()
	l.countRewrite()
	defer l.countRewrite()
	l.mu.Lock()
	keys := append([]heldKey(nil), l.keys...)
	l.mu.Unlock()
	at := anchorNow(l.opts.Clock)
	for i := len(keys) - 1; i >= 0; i-- {
		nk, err := l.rewrite(ctx, keys[i])
		if err != nil {
			// Keep what was rewritten (its new version is what the next
			// compare-and-swap must name); the lease's anchor stays.
			l.mu.Lock()
			copy(l.keys[i+1:], keys[i+1:])
			l.mu.Unlock()
			return anchor{}, err
		}
		keys[i] = nk
	}
	l.mu.Lock()
	l.keys = keys
	l.mu.Unlock()
	return at, nil
}

// countRewrite marks the start or the end of a key rewrite.
func (l *Lock) countRewrite() {
	l.mu.Lock()
	l.rewrites++
	l.mu.Unlock()
}

// recheck runs after a refresh by read, compare and write (no
// compare-and-swap): a break-lock between the read and the write lets
// another process in, and our write then re-created our key beside its
// lock. So an exclusive holder lists the intents and shared keys, and
// loses the lease if another live one stays for ContentionWait (a
// contender that sees our intent backs off at once); a shared holder loses
// it if the exclusive key is live or its own key is gone.
func (l *Lock) recheck(ctx context.Context) error {
	ctx, cancel, err := l.requestContext(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	l.mu.Lock()
	keys := append([]heldKey(nil), l.keys...)
	l.mu.Unlock()
	if l.shared {
		if err := exclusiveBlocks(ctx, l.st, nil, l.sclock.mustNow, l.opts); errors.Is(err, ErrLocked) {
			return &errLostNow{fmt.Errorf("%w: another process holds the exclusive lock beside ours (break-lock?): %w", ErrLeaseLost, err)}
		} else if err != nil {
			return err
		}
		ours, err := l.stillOurs(ctx, keys[0])
		if err == nil && !ours {
			return &errLostNow{fmt.Errorf("%w: %s was removed (break-lock?)", ErrLeaseLost, keys[0].key)}
		}
		return err
	}
	intent := keys[len(keys)-1].key
	start := anchorNow(l.opts.Clock)
	for {
		err := blocking(ctx, l.st, IntentPrefix, intent, l.sclock.mustNow, l.opts)
		if err == nil {
			err = blocking(ctx, l.st, SharedPrefix, "", l.sclock.mustNow, l.opts)
		}
		if err == nil || !errors.Is(err, ErrLocked) {
			return err
		}
		if start.elapsed(l.opts.Clock) >= l.opts.ContentionWait {
			return &errLostNow{fmt.Errorf("%w: another process holds a lock beside our exclusive one (break-lock?): %w", ErrLeaseLost, err)}
		}
		if !l.sleep(jitter(firstBackoff * 4)) {
			return ctx.Err()
		}
	}
}

// rewrite writes k's key again with a fresh expiry and nonce:
// compare-and-swap on our last version where the store can, else read,
// compare and overwrite (the read and the write both fenced by the lease,
// so no successor can exist in between, see docs/lock.md).
func (l *Lock) rewrite(ctx context.Context, k heldKey) (heldKey, error) {
	ctx, cancel, err := l.requestContext(ctx)
	if err != nil {
		return k, err
	}
	defer cancel()
	p := k.p
	p.ExpiresAt = l.sclock.mustNow().Add(l.opts.TTL)
	p.Nonce = randomHex()
	data := p.encode()
	opts := store.PutOptions{}
	if l.caps.CompareAndSwap && k.version != "" {
		opts.IfVersion = k.version
	} else {
		cur, err := l.st.Get(ctx, k.key, MaxPayload)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return k, &errLostNow{fmt.Errorf("%w: %s was removed (break-lock?)", ErrLeaseLost, k.key)}
		case unreadable(err):
			return k, &errLostNow{fmt.Errorf("%w: %s was replaced: %w", ErrLeaseLost, k.key, err)}
		case err != nil:
			return k, err
		case !bytes.Equal(cur, k.data):
			return k, &errLostNow{fmt.Errorf("%w: %s now holds another process's lock", ErrLeaseLost, k.key)}
		}
	}
	info, err := l.st.Put(ctx, k.key, data, opts)
	if errors.Is(err, store.ErrVersionMismatch) || errors.Is(err, store.ErrNotFound) {
		return k, &errLostNow{fmt.Errorf("%w: %s was removed or taken over (break-lock?): %w", ErrLeaseLost, k.key, err)}
	}
	if err != nil {
		return k, err
	}
	l.sclock.observe(info.ModTime)
	return heldKey{key: k.key, p: p, data: data, version: info.Version}, nil
}

// requestContext bounds one lock request by RequestTimeout and by the
// lease's safe end; past the safe end it refuses with the loss error.
func (l *Lock) requestContext(ctx context.Context) (context.Context, context.CancelFunc, error) {
	if err := l.valid(); err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, min(l.opts.RequestTimeout, l.remaining()))
	return ctx, cancel, nil
}
