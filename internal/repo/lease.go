package repo

import (
	"errors"
	"fmt"

	"github.com/cloudstic/cloudstic/internal/repo/lock"
)

// Sentinel errors of taking a writer (or a locked view) from a lease.
var (
	// ErrNoLease: a write was asked for without a lock acquired by package
	// lock (nil, or a Lock value not made by lock.AcquireShared or
	// lock.AcquireExclusive).
	ErrNoLease = errors.New("no repository lock held for this write")
	// ErrSharedLease: an operation that needs the exclusive lock was given
	// a shared one.
	ErrSharedLease = errors.New("this operation needs the exclusive repository lock, not a shared one")
)

// requireLease returns nil when l is a lock acquired by package lock, and
// an exclusive one when exclusive is set. It does not ask the store whether
// the lease still holds: that is l.Check, called right before the writes
// that need it, and the fence, which refuses every request after it.
func requireLease(l *lock.Lock, exclusive bool) error {
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

// Under returns a read-only view of r whose every store request goes
// through lease's fence (lock.Lock.Fence): refused once the lease is lost,
// released or past its safe end. Reads that must hold a lock run on it (a
// restore, a copy's source, find, dump, stats, mount: a prune must not
// delete what they read). It shares r's keys, index and cache.
// ErrNoLease when lease is not a lock package lock acquired.
func (r *Repository) Under(lease *lock.Lock) (*Repository, error) {
	if err := requireLease(lease, false); err != nil {
		return nil, err
	}
	return r.fencedBy(lease), nil
}

// fencedBy is the view of r through lease's fence.
func (r *Repository) fencedBy(lease *lock.Lock) *Repository {
	return &Repository{st: lease.Fence(r.st), cfg: r.cfg, authenticated: r.authenticated,
		key: r.key, codec: r.codec, idx: r.idx, cache: r.cache, derived: r.derived, diskIndex: r.diskIndex, damage: r.damage, reqCost: r.reqCost}
}
