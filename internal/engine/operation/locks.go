package operation

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/s3"
	"github.com/cloudstic/cloudstic/internal/store/sftp"
	"github.com/cloudstic/cloudstic/internal/store/wrap"
)

// What front ends see of the lock and the stores, so that they need not
// import internal/repo/lock or internal/store (the operation layer is their
// only way in).
type (
	// LockInfo describes one lock object (lock.Info).
	LockInfo = lock.Info
	// LockOptions tune the locks operations take (lock.Options: Wait is
	// -lock-wait, Trace records a lease's history for tests).
	LockOptions = lock.Options
	// LockTraceEvent is one step of a lease's life (lock.TraceEvent).
	LockTraceEvent = lock.TraceEvent
	// Store is a repository store (store.Store), as a test wrapper of
	// StoreOptions sees it.
	Store = store.Store
	// StoreCounts are an opened store's request and byte counts.
	StoreCounts = wrap.Counts
	// S3Config is the configuration of s3: and b2: stores (s3.Config).
	S3Config = s3.Config
	// SFTPConfig is the configuration of sftp:// stores (sftp.Config).
	SFTPConfig = sftp.Config
)

// Lock errors and events, tested with errors.Is.
var (
	// ErrLocked: a live lock held by someone else refused the operation;
	// the message names every holder.
	ErrLocked = lock.ErrLocked
	// ErrLeaseLost: the operation's lock was lost (not refreshed in time,
	// broken or taken over), and its work stopped.
	ErrLeaseLost = lock.ErrLeaseLost
	// ErrBadLock: a lock object cannot be read; it counts as held.
	ErrBadLock = lock.ErrBadLock
	// ErrHolderDead: a holder that refused the operation is a process of
	// this host that no longer exists; BreakLocks with staleOnly removes
	// its lock.
	ErrHolderDead = lock.ErrHolderDead
	// ErrNotLockKey: CatLock was given a name that is no lock key.
	ErrNotLockKey = errors.New("not a lock key")
	// ErrNoLock: CatLock's lock is not there (it may have been released).
	ErrNoLock = errors.New("no such lock")
)

// Lease events of LockTraceEvent.Event.
const (
	TraceAcquired = lock.TraceAcquired
	TraceRenewed  = lock.TraceRenewed
)

// Default deadlines of store requests, for front ends' flags.
const (
	DefaultConnectTimeout  = store.DefaultConnectTimeout
	DefaultResponseTimeout = store.DefaultResponseTimeout
)

// ParseS3ConditionalWrites parses "auto", "create-only" or "none" ("" is
// auto), the conditional writes an s3: or b2: store may use.
func ParseS3ConditionalWrites(s string) (s3.ConditionalWrites, error) {
	return s3.ParseConditionalWrites(s)
}

// DescribeStore names st for humans (store.Describe).
func DescribeStore(st Store) string { return store.Describe(st) }

// Locks lists every lock object in st (the `locks` command), staleness and
// dead holders judged as lock.List does. Locks are plain JSON: no
// credentials are needed, and the repository need not open.
func Locks(ctx context.Context, st Store, o LockOptions) ([]LockInfo, error) {
	return lock.List(ctx, st, o)
}

// BreakLocks removes lock objects from st (`break-lock`): all of them, or
// with staleOnly the stale ones and those of dead holders (lock.Break). It
// returns what it removed.
func BreakLocks(ctx context.Context, st Store, staleOnly bool, o LockOptions) ([]LockInfo, error) {
	return lock.Break(ctx, st, staleOnly, o)
}

// CatLock returns the bytes of the lock ref names (`cat lock`): the
// exclusive key or a shared key, by its full key or by its name under the
// shared prefix. Errors wrap ErrNotLockKey or ErrNoLock.
func CatLock(ctx context.Context, st Store, ref string) (key string, data []byte, err error) {
	key = ref
	if !strings.HasPrefix(key, "index/lock") {
		key = lock.SharedPrefix + key
	}
	if key != lock.ExclusiveKey && !strings.HasPrefix(key, lock.SharedPrefix) {
		return key, nil, fmt.Errorf("%q: %w", ref, ErrNotLockKey)
	}
	data, err = st.Get(ctx, key, lock.MaxPayload)
	switch {
	case errors.Is(err, store.ErrInvalidKey):
		return key, nil, fmt.Errorf("%q: %w", ref, ErrNotLockKey)
	case errors.Is(err, store.ErrNotFound):
		return key, nil, fmt.Errorf("%w %s", ErrNoLock, key)
	}
	return key, data, err
}
