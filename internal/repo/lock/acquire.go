package lock

import (
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/store"
)

// takeoverAttempts bounds how often one acquire re-examines an exclusive key
// that keeps changing under it.
const takeoverAttempts = 3

// acquirer performs one acquisition.
type acquirer struct {
	st        store.Store
	opts      Options
	caps      store.Capabilities
	operation string
}

// AcquireShared takes a shared lock for operation (backup, restore): blocked
// only by a live exclusive lock.
func AcquireShared(ctx context.Context, st store.Store, operation string, opts Options) (*Lock, error) {
	a, err := newAcquirer(st, operation, opts)
	if err != nil {
		return nil, err
	}
	return a.withWait(ctx, a.shared)
}

// AcquireExclusive takes the exclusive lock for operation (prune): blocked by
// any live lock.
func AcquireExclusive(ctx context.Context, st store.Store, operation string, opts Options) (*Lock, error) {
	a, err := newAcquirer(st, operation, opts)
	if err != nil {
		return nil, err
	}
	return a.withWait(ctx, a.exclusive)
}

func newAcquirer(st store.Store, operation string, opts Options) (*acquirer, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if operation == "" {
		return nil, errors.New("lock: empty operation name")
	}
	return &acquirer{st: st, opts: opts, caps: st.Capabilities(), operation: operation}, nil
}

// withWait runs attempt once, or, with Options.Wait, retries a blocked one
// with jittered exponential backoff until Wait has elapsed.
func (a *acquirer) withWait(ctx context.Context, attempt func(context.Context) (*Lock, error)) (*Lock, error) {
	clk := a.opts.Clock
	deadline := clk.Now().Add(a.opts.Wait)
	backoff := 250 * time.Millisecond
	for {
		l, err := attempt(ctx)
		if err == nil || a.opts.Wait <= 0 || !errors.Is(err, ErrLocked) {
			return l, err
		}
		left := deadline.Sub(clk.Now())
		if left <= 0 {
			return nil, err
		}
		d := min(backoff/2+mrand.N(backoff/2+1), left)
		if werr := clock.Sleep(ctx, clk, d); werr != nil {
			return nil, fmt.Errorf("waiting for the lock: %w (last: %w)", werr, err)
		}
		backoff = min(2*backoff, 8*time.Second)
	}
}

// newPayload is our payload acquired at now.
func (a *acquirer) newPayload(now time.Time, shared bool) payload {
	return payload{Operation: a.operation, Holder: a.opts.holder(), AcquiredAt: now.UTC(),
		ExpiresAt: now.Add(a.opts.TTL).UTC(), IsShared: shared}
}

// shared: check the exclusive key, write our own key, check again.
func (a *acquirer) shared(ctx context.Context) (*Lock, error) {
	if err := a.exclusiveBlocks(ctx); err != nil {
		return nil, err
	}
	now := a.opts.Clock.Now()
	key := SharedPrefix + now.UTC().Format(timeLayout) + "-" + randomHex()
	p := a.newPayload(now, true)
	data := p.encode()
	info, err := a.st.Put(ctx, key, data, store.PutOptions{IfAbsent: a.caps.CreateIfAbsent})
	if err != nil {
		return nil, fmt.Errorf("writing shared lock %s: %w", key, err)
	}
	if err := checkSkew(key, now, a.opts.Clock.Now(), info.ModTime, a.opts.MaxClockSkew); err != nil {
		return nil, a.withdraw(ctx, key, err)
	}
	if err := a.exclusiveBlocks(ctx); err != nil {
		return nil, a.withdraw(ctx, key, err)
	}
	return newLock(ctx, a.st, a.opts, key, p, data, info.Version), nil
}

// exclusive: create the key (atomically where possible, taking over a stale
// one), verify it, then make sure no live shared lock exists.
func (a *acquirer) exclusive(ctx context.Context) (*Lock, error) {
	if !a.caps.CreateIfAbsent {
		return a.exclusiveFallback(ctx)
	}
	for range takeoverAttempts {
		now := a.opts.Clock.Now()
		p := a.newPayload(now, false)
		info, err := a.st.Put(ctx, ExclusiveKey, p.encode(), store.PutOptions{IfAbsent: true})
		if err == nil {
			return a.finishExclusive(ctx, now, p, info)
		}
		if !errors.Is(err, store.ErrExists) {
			return nil, fmt.Errorf("writing exclusive lock: %w", err)
		}
		l, err := a.takeOver(ctx)
		if l != nil || err != nil {
			return l, err
		}
	}
	return nil, &conflictError{msg: "repository lock " + ExclusiveKey + " kept changing while we tried to acquire it",
		errs: []error{ErrLocked}}
}

// takeOver examines an existing exclusive key: live or unreadable → the
// conflict error; stale → replace it by compare-and-swap on the version we
// judged (or delete it if still the same, without CAS). (nil, nil) means
// "look again".
func (a *acquirer) takeOver(ctx context.Context) (*Lock, error) {
	cur, err := statGet(ctx, a.st, ExclusiveKey, false)
	if err != nil || !cur.present {
		return nil, err
	}
	if err := cur.blocks(ExclusiveKey, a.opts.Clock.Now(), a.opts.TTL); err != nil {
		return nil, err
	}
	if !a.caps.CompareAndSwap || cur.info.Version == "" {
		return nil, deleteIfSame(ctx, a.st, ExclusiveKey, cur.data)
	}
	now := a.opts.Clock.Now()
	p := a.newPayload(now, false)
	info, err := a.st.Put(ctx, ExclusiveKey, p.encode(), store.PutOptions{IfVersion: cur.info.Version})
	if errors.Is(err, store.ErrVersionMismatch) || errors.Is(err, store.ErrNotFound) {
		return nil, nil // someone else moved first
	}
	if err != nil {
		return nil, fmt.Errorf("taking over stale exclusive lock: %w", err)
	}
	return a.finishExclusive(ctx, now, p, info)
}

// exclusiveFallback is for stores without create-if-absent: check, write,
// wait SettleDelay, verify (see docs/lock.md for the residual risk).
func (a *acquirer) exclusiveFallback(ctx context.Context) (*Lock, error) {
	cur, err := statGet(ctx, a.st, ExclusiveKey, false)
	if err != nil {
		return nil, err
	}
	if err := cur.blocks(ExclusiveKey, a.opts.Clock.Now(), a.opts.TTL); err != nil {
		return nil, err
	}
	now := a.opts.Clock.Now()
	p := a.newPayload(now, false)
	info, err := a.st.Put(ctx, ExclusiveKey, p.encode(), store.PutOptions{})
	if err != nil {
		return nil, fmt.Errorf("writing exclusive lock: %w", err)
	}
	return a.finishExclusive(ctx, now, p, info)
}
