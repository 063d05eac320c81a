package lock

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cloudstic/cloudstic/internal/termtext"
)

// Sentinel errors, tested with errors.Is.
var (
	// ErrLocked: a live lock held by someone else blocks the acquire. The
	// error's text names every holder, in the seed's words when there is
	// one.
	ErrLocked = errors.New("repository is locked")
	// ErrLeaseLost: our lock was not refreshed in time, or was broken or
	// taken over. It is the cause of a Lock's cancelled Context.
	ErrLeaseLost = errors.New("repository lock lease lost")
	// ErrBadLock: a lock object cannot be parsed. It counts as held.
	ErrBadLock = errors.New("unreadable repository lock")
	// ErrHolderDead: besides ErrLocked, a lock that blocks the acquire
	// belongs to a process of this host (same boot, same pid namespace)
	// that no longer exists; break-lock with staleOnly removes it.
	ErrHolderDead = errors.New("a lock holder's process is gone")
)

// errContended marks a conflict with another process's exclusive attempt
// (an intent without an exclusive lock yet), which backs off: worth a short
// wait or a retry even without Options.Wait.
var errContended = errors.New("another process is acquiring the exclusive lock")

// maxNamed bounds the holders a refusal names (the rest are counted): the
// message is one line, and `locks` shows them all.
const maxNamed = 10

// conflictError carries a human message and wraps ErrLocked.
type conflictError struct {
	msg  string
	errs []error
}

func (e *conflictError) Error() string   { return e.msg }
func (e *conflictError) Unwrap() []error { return e.errs }

// refusal names the live or unreadable lock objects that block an acquire.
// Holders and operations are whatever the lock objects say (anyone who can
// write to the store can write one), so the message renders them with
// termtext.Safe.
type refusal struct {
	objs []object
	// gone[i]: objs[i]'s holder is a process of this host that is gone
	// (set by the acquirer, which can ask the platform; see observer).
	gone []bool
}

// heldError is the refusal by the live lock object o.
func heldError(o object) error { return &refusal{objs: []object{o}, gone: []bool{false}} }

// joinRefusals merges the refusals among errs into one. A nil error is
// skipped; any other error that is not a refusal is returned as it is.
func joinRefusals(errs ...error) error {
	var all refusal
	for _, err := range errs {
		var r *refusal
		switch {
		case err == nil:
		case errors.As(err, &r):
			all.objs, all.gone = append(all.objs, r.objs...), append(all.gone, r.gone...)
		default:
			return err
		}
	}
	if len(all.objs) == 0 {
		return nil
	}
	return &all
}

// observe marks the holders whose process this host knows to be gone.
func (e *refusal) observe(obs observer) {
	for i, o := range e.objs {
		e.gone[i] = o.bad == nil && obs.gone(o.p)
	}
}

// contended: every blocker is an exclusive attempt (a readable intent),
// which backs off.
func (e *refusal) contended() bool {
	for _, o := range e.objs {
		if o.bad != nil || !isIntent(o.key) {
			return false
		}
	}
	return true
}

// Unwrap gives ErrLocked, errContended for a contention, ErrHolderDead
// when a holder's process is gone, and the decode errors of unreadable
// objects (ErrBadLock).
func (e *refusal) Unwrap() []error {
	errs := []error{ErrLocked}
	if e.contended() {
		errs = append(errs, errContended)
	}
	if slices.Contains(e.gone, true) {
		errs = append(errs, ErrHolderDead)
	}
	for _, o := range e.objs {
		if o.bad != nil {
			errs = append(errs, o.bad)
		}
	}
	return errs
}

// Error is the seed's message for one holder, "repository is exclusively
// locked by HOST (pid N) (operation: prune, acquired: ..., expires: ...)",
// or, for several, their count and each of them (up to maxNamed) on one
// line. An exclusive holder's intent is not named apart from its key.
func (e *refusal) Error() string {
	objs, gone := e.distinct()
	if len(objs) == 1 {
		o := objs[0]
		if o.bad != nil {
			return badLockMessage(o)
		}
		return fmt.Sprintf("repository is %s by %s", kindWords(o), holderFacts(o, gone[0]))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "repository is locked by %d holders: ", len(objs))
	for i, o := range objs {
		if i == maxNamed {
			fmt.Fprintf(&b, ", and %d more", len(objs)-maxNamed)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		if o.bad != nil {
			fmt.Fprintf(&b, "lock %s (unreadable, counts as held: %v)", termtext.Safe(o.key), o.bad)
			continue
		}
		fmt.Fprintf(&b, "%s %s", kindShort(o), holderFacts(o, gone[i]))
	}
	return b.String()
}

// distinct leaves out the intents of holders named by another object with
// the same holder and operation (an exclusive holder has its key and its
// intent).
func (e *refusal) distinct() ([]object, []bool) {
	var objs []object
	var gone []bool
	seen := map[string]bool{}
	for i, o := range e.objs {
		if o.bad == nil {
			id := o.p.Holder + "\x00" + o.p.Operation
			if seen[id] || ((isIntent(o.key) || isQueued(o.key)) && e.namedElsewhere(i)) {
				continue
			}
			seen[id] = true
		}
		objs, gone = append(objs, o), append(gone, e.gone[i])
	}
	return objs, gone
}

// namedElsewhere: a non-intent object names the same holder as objs[i].
func (e *refusal) namedElsewhere(i int) bool {
	for j, o := range e.objs {
		if j != i && o.bad == nil && !isIntent(o.key) && !isQueued(o.key) && o.p.Holder == e.objs[i].p.Holder && o.p.Operation == e.objs[i].p.Operation {
			return true
		}
	}
	return false
}

// kindWords is the seed's wording of a lock's kind.
func kindWords(o object) string {
	switch {
	case isQueued(o.key) && o.p.IsShared:
		return "queued for a shared lock"
	case isQueued(o.key):
		return "queued for an exclusive lock"
	case o.p.IsShared:
		return "locked (shared)"
	case isIntent(o.key):
		return "being locked exclusively"
	default:
		return "exclusively locked"
	}
}

// kindShort is a lock's kind among several holders.
func kindShort(o object) string {
	switch {
	case isQueued(o.key) && o.p.IsShared:
		return "queued for shared by"
	case isQueued(o.key):
		return "queued for exclusive by"
	case o.p.IsShared:
		return "shared by"
	case isIntent(o.key):
		return "being locked exclusively by"
	default:
		return "exclusively by"
	}
}

// holderFacts is "HOST (pid N) (operation: OP, acquired: T, expires: T)",
// with ", dead: its process is gone" when it is.
func holderFacts(o object, gone bool) string {
	s := fmt.Sprintf("%s (operation: %s, acquired: %s, expires: %s", termtext.Safe(o.p.Holder), termtext.Safe(o.p.Operation),
		fmtTime(o.p.AcquiredAt), fmtTime(o.p.ExpiresAt))
	if gone {
		s += ", dead: its process is gone"
	}
	return s + ")"
}

// badLockMessage describes an unparsable lock, which counts as held.
func badLockMessage(o object) string {
	return fmt.Sprintf("repository lock %s cannot be read and counts as held (if no backup, restore or prune is running, remove it with break-lock): %v",
		termtext.Safe(o.key), o.bad)
}

func fmtTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }
