package lock

import (
	"errors"
	"fmt"
	"time"
)

// Sentinel errors, tested with errors.Is.
var (
	// ErrLocked: a live lock held by someone else blocks the acquire. The
	// error's text is the seed's message naming the holder.
	ErrLocked = errors.New("repository is locked")
	// ErrLeaseLost: our lock was not refreshed in time, or was broken or
	// taken over. It is the cause of a Lock's cancelled Context.
	ErrLeaseLost = errors.New("repository lock lease lost")
	// ErrClockSkew: our clock and the store's differ by more than
	// Options.MaxClockSkew, so lease times cannot be trusted.
	ErrClockSkew = errors.New("clock skew between this host and the store")
	// ErrBadLock: a lock object cannot be parsed. It counts as held.
	ErrBadLock = errors.New("unreadable repository lock")
)

// conflictError carries the seed's human message and wraps ErrLocked (and,
// for an unparsable lock, the decode error).
type conflictError struct {
	msg  string
	errs []error
}

func (e *conflictError) Error() string   { return e.msg }
func (e *conflictError) Unwrap() []error { return e.errs }

// heldError describes a live lock that blocks us.
func heldError(p payload) error {
	kind := "exclusively locked"
	if p.IsShared {
		kind = "locked (shared)"
	}
	return &conflictError{
		msg: fmt.Sprintf("repository is %s by %s (operation: %s, acquired: %s, expires: %s)",
			kind, p.Holder, p.Operation, fmtTime(p.AcquiredAt), fmtTime(p.ExpiresAt)),
		errs: []error{ErrLocked},
	}
}

// badLockError describes an unparsable lock, which counts as held.
func badLockError(key string, cause error) error {
	return &conflictError{
		msg: fmt.Sprintf("repository lock %s cannot be read and counts as held (if no backup, restore or prune is running, remove it with break-lock): %v",
			key, cause),
		errs: []error{ErrLocked, cause},
	}
}

// skewError reports our time against the store's.
func skewError(key string, ours, theirs time.Time, limit time.Duration) error {
	return fmt.Errorf("%w: writing %s: our clock says %s, the store's says %s (more than %v apart); fix this host's clock",
		ErrClockSkew, key, fmtTime(ours), fmtTime(theirs), limit)
}

func fmtTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }
