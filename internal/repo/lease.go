package repo

import (
	"errors"
	"fmt"

	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/store"
)

// Sentinel errors of RequireLease.
var (
	// ErrNoLease: a write was asked for without a lock acquired by package
	// lock (nil, or a Lock value not made by lock.AcquireShared or
	// lock.AcquireExclusive).
	ErrNoLease = errors.New("no repository lock held for this write")
	// ErrSharedLease: an operation that needs the exclusive lock was given
	// a shared one.
	ErrSharedLease = errors.New("this operation needs the exclusive repository lock, not a shared one")
)

// RequireLease returns nil when l is a lock acquired by package lock, and
// an exclusive one when exclusive is set. Every writing entry point calls
// it first, so that no caller can write without the lock the seed assigns
// to its operation. It does not ask the store whether the lease still
// holds: that is l.Check, called right before the writes that need it.
func RequireLease(l *lock.Lock, exclusive bool) error {
	// Only package lock sets a Lock's context; a zero Lock has none.
	if l == nil || l.Context() == nil {
		return ErrNoLease
	}
	// Info, not Shared: Shared reads the held keys without the Lock's
	// mutex while the refresher rewrites them (a data race under -race).
	if exclusive && l.Info().IsShared {
		return fmt.Errorf("%w (given %s)", ErrSharedLease, l.Info().Key)
	}
	return nil
}

// Under returns a view of r whose every store request goes through lease's
// fence (lock.Lock.Fence): refused once the lease is lost, released or past
// its safe end, so a holder that lost its lease writes nothing more. It
// shares r's keys, index and cache. Writing entry points run on it.
func (r *Repository) Under(lease *lock.Lock) *Repository {
	return &Repository{st: lease.Fence(r.st), unfenced: r.store(), cfg: r.cfg, authenticated: r.authenticated,
		key: r.key, codec: r.codec, idx: r.idx, cache: r.cache, damage: r.damage}
}

// store is the store below any fence: for what a fence does not forward
// (store.TempCleaner), called only after a lease check.
func (r *Repository) store() store.Store {
	if r.unfenced != nil {
		return r.unfenced
	}
	return r.st
}
