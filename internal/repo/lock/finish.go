package lock

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/store"
)

// finishExclusive runs after our exclusive key was written at now: check the
// store's clock, wait SettleDelay on stores without create-if-absent, verify
// the key is still ours, then list the shared locks (symmetric
// write-then-check: a shared holder that registered before our write is seen
// here; one registering after it sees our key).
func (a *acquirer) finishExclusive(ctx context.Context, now time.Time, p payload, info store.ObjectInfo) (*Lock, error) {
	data := p.encode()
	if err := checkSkew(ExclusiveKey, now, a.opts.Clock.Now(), info.ModTime, a.opts.MaxClockSkew); err != nil {
		return nil, a.withdrawExclusive(ctx, data, info.Version, err)
	}
	if !a.caps.CreateIfAbsent {
		if err := clock.Sleep(ctx, a.opts.Clock, a.opts.SettleDelay); err != nil {
			return nil, a.withdrawExclusive(ctx, data, info.Version, err)
		}
	}
	l := newHeld(a.st, ExclusiveKey, data, info.Version)
	ours, err := l.stillOurs(ctx)
	if err != nil {
		return nil, a.withdrawExclusive(ctx, data, info.Version, fmt.Errorf("verifying exclusive lock: %w", err))
	}
	if !ours {
		return nil, a.lostRace(ctx)
	}
	if err := a.sharedBlocks(ctx); err != nil {
		return nil, a.withdrawExclusive(ctx, data, info.Version, err)
	}
	return newLock(ctx, a.st, a.opts, ExclusiveKey, p, data, info.Version), nil
}

// newHeld is a not-yet-running Lock, enough for stillOurs.
func newHeld(st store.Store, key string, data []byte, version string) *Lock {
	return &Lock{st: st, key: key, data: data, version: version}
}

// lostRace reports who overwrote our exclusive key between write and verify.
func (a *acquirer) lostRace(ctx context.Context) error {
	o, err := get(ctx, a.st, ExclusiveKey, false)
	if err == nil && o.present && o.bad == nil {
		return heldError(o.p)
	}
	return &conflictError{msg: "repository lock " + ExclusiveKey + " was taken by another process while we acquired it",
		errs: []error{ErrLocked}}
}

// withdrawExclusive removes the exclusive key we just wrote, only while it
// still holds our write, and returns cause (plus any delete error).
func (a *acquirer) withdrawExclusive(ctx context.Context, data []byte, version string, cause error) error {
	ctx = context.WithoutCancel(ctx)
	ours, err := newHeld(a.st, ExclusiveKey, data, version).stillOurs(ctx)
	if err != nil || !ours {
		return cause // gone, replaced, or unknown: leave it alone
	}
	return a.withdraw(ctx, ExclusiveKey, cause)
}

// withdraw removes a key we just wrote and returns cause, joined with any
// delete error. It runs even when ctx is cancelled.
func (a *acquirer) withdraw(ctx context.Context, key string, cause error) error {
	ctx = context.WithoutCancel(ctx)
	if err := a.st.Delete(ctx, key); err != nil && !errors.Is(err, store.ErrNotFound) {
		return &withdrawError{cause: cause, err: fmt.Errorf("removing our lock %s: %w", key, err)}
	}
	return cause
}

// withdrawError keeps the cause's text first and unwraps to both errors.
type withdrawError struct{ cause, err error }

func (e *withdrawError) Error() string   { return e.cause.Error() + " (and " + e.err.Error() + ")" }
func (e *withdrawError) Unwrap() []error { return []error{e.cause, e.err} }

// randomHex is 16 random hex digits for a shared key.
func randomHex() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never returns an error (Go 1.24+)
	return hex.EncodeToString(b[:])
}
