package lock

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cloudstic/cloudstic/internal/termtext"
)

// Sentinel errors, tested with errors.Is.
var (
	// ErrLocked: a live lock held by someone else blocks the acquire. The
	// error's text is the seed's message naming the holder.
	ErrLocked = errors.New("repository is locked")
	// ErrLeaseLost: our lock was not refreshed in time, or was broken or
	// taken over. It is the cause of a Lock's cancelled Context.
	ErrLeaseLost = errors.New("repository lock lease lost")
	// ErrBadLock: a lock object cannot be parsed. It counts as held.
	ErrBadLock = errors.New("unreadable repository lock")
)

// errContended marks a conflict with another process's exclusive attempt
// (an intent without an exclusive lock yet), which backs off: worth a short
// wait or a retry even without Options.Wait.
var errContended = errors.New("another process is acquiring the exclusive lock")

// conflictError carries the seed's human message and wraps ErrLocked (and,
// for an unparsable lock, the decode error).
type conflictError struct {
	msg  string
	errs []error
}

func (e *conflictError) Error() string   { return e.msg }
func (e *conflictError) Unwrap() []error { return e.errs }

// heldError describes the live lock object under key that blocks us. An
// intent is an exclusive attempt, which may still back off. The holder and
// operation are whatever the lock object says (anyone who can write to the
// store can write one), so the message renders them with termtext.Safe.
func heldError(key string, p payload) error {
	kind, errs := "exclusively locked", []error{ErrLocked}
	switch {
	case p.IsShared:
		kind = "locked (shared)"
	case strings.HasPrefix(key, IntentPrefix):
		kind, errs = "being locked exclusively", []error{ErrLocked, errContended}
	}
	return &conflictError{
		msg: fmt.Sprintf("repository is %s by %s (operation: %s, acquired: %s, expires: %s)",
			kind, termtext.Safe(p.Holder), termtext.Safe(p.Operation), fmtTime(p.AcquiredAt), fmtTime(p.ExpiresAt)),
		errs: errs,
	}
}

// badLockError describes an unparsable lock, which counts as held.
func badLockError(key string, cause error) error {
	return &conflictError{
		msg: fmt.Sprintf("repository lock %s cannot be read and counts as held (if no backup, restore or prune is running, remove it with break-lock): %v",
			termtext.Safe(key), cause),
		errs: []error{ErrLocked, cause},
	}
}

func fmtTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }
