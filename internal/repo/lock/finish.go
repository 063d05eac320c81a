package lock

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/cloudstic/cloudstic/internal/store"
)

// lostRace reports who overwrote our exclusive key between our write and
// our read-back (stores without create-if-absent).
func (a *acquirer) lostRace(ctx context.Context, readErr error) error {
	if readErr != nil {
		return fmt.Errorf("verifying exclusive lock: %w", readErr)
	}
	o, err := get(ctx, a.st, ExclusiveKey, false)
	if err == nil && o.present && o.bad == nil {
		return heldError(o)
	}
	return &conflictError{msg: "repository lock " + ExclusiveKey + " was taken by another process while we acquired it",
		errs: []error{ErrLocked}}
}

// withdrawExclusive removes the exclusive key we just wrote, only while it
// still holds our write, and returns cause (plus any delete error).
func (a *acquirer) withdrawExclusive(ctx context.Context, k heldKey, cause error) error {
	ctx, cancel := a.cleanupContext(ctx)
	defer cancel()
	ours, err := stillOurs(ctx, a.st, a.capabilities(), k)
	if err != nil || !ours {
		return cause // gone, replaced, or unknown: leave it alone
	}
	return a.withdraw(ctx, k.key, cause)
}

// withdraw removes a key we just wrote and returns cause, joined with any
// delete error. It runs even when ctx is cancelled (Ctrl-C must not leave a
// lock behind).
func (a *acquirer) withdraw(ctx context.Context, key string, cause error) error {
	ctx, cancel := a.cleanupContext(ctx)
	defer cancel()
	if err := store.DeleteAbsentOK(ctx, a.st, key); err != nil {
		return &withdrawError{cause: cause, err: fmt.Errorf("removing our lock %s: %w", key, err)}
	}
	return cause
}

// cleanupContext outlives ctx's cancellation, bounded by RequestTimeout.
func (a *acquirer) cleanupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), a.opts.RequestTimeout)
}

// withdrawError keeps the cause's text first and unwraps to both errors.
type withdrawError struct{ cause, err error }

func (e *withdrawError) Error() string   { return e.cause.Error() + " (and " + e.err.Error() + ")" }
func (e *withdrawError) Unwrap() []error { return []error{e.cause, e.err} }

// randomHex is 16 random hex digits: shared key and intent suffixes, nonces.
func randomHex() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never returns an error (Go 1.24+)
	return hex.EncodeToString(b[:])
}
