package operation

import (
	"context"
	"sync"

	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/store"
)

// LockAhead names the lock the caller's next operation takes, so that
// Open can start taking it while it derives the key: over a network the
// lock's requests (five for a shared lock) and the key's derivation then
// overlap instead of following one another. The lock is only started once
// the config has been read (the store holds a repository) and the
// credentials are known (no lock is held while a prompt waits); an open
// that fails releases it, and so does Close when no operation took it.
type LockAhead int

// The operations whose lock Open can take ahead.
const (
	// NoLockAhead: the operation takes its lock when it starts.
	NoLockAhead LockAhead = iota
	// BackupLockAhead is Backup's shared lock (a dry run takes none).
	BackupLockAhead
	// RestoreLockAhead is Restore's shared lock.
	RestoreLockAhead
)

// Names of the operations' locks, as the lock objects carry them.
const (
	opBackup  = "backup"
	opRestore = "restore"
)

// lock returns the mode and name of the lock a names.
func (a LockAhead) lock() (mode, string) {
	switch a {
	case BackupLockAhead:
		return shared, opBackup
	case RestoreLockAhead:
		return shared, opRestore
	}
	return 0, ""
}

// aheadLock is a lock being taken (or taken) ahead of the operation that
// needs it. The first withLock of the same mode and name takes it over;
// any other acquires its own.
type aheadLock struct {
	mode   mode
	op     string
	cancel context.CancelFunc
	done   chan struct{} // closed when lease and err are set
	lease  *lock.Lock
	err    error

	mu    sync.Mutex
	taken bool
}

// startAhead starts acquiring the lock a names on st, on a context of its
// own (derived from ctx) that drop cancels; nil for NoLockAhead.
func startAhead(ctx context.Context, st store.Store, env env, a LockAhead) *aheadLock {
	m, op := a.lock()
	if op == "" {
		return nil
	}
	actx, cancel := context.WithCancel(ctx)
	ah := &aheadLock{mode: m, op: op, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(ah.done)
		ah.lease, ah.err = acquire(actx, env, st, m, op)
	}()
	return ah
}

// take hands the lock over to an operation of mode m named op: ok is
// false when a is nil, of another mode or name, or already taken. The
// lease is the lock's (nil with err when it could not be taken), and the
// caller now releases it.
func (a *aheadLock) take(m mode, op string) (lease *lock.Lock, ok bool, err error) {
	if a == nil || a.mode != m || a.op != op {
		return nil, false, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.taken {
		return nil, false, nil
	}
	a.taken = true
	<-a.done
	return a.lease, true, a.err
}

// drop releases the lock when no operation took it (it waits for the
// acquisition to end first), and ends a's context.
func (a *aheadLock) drop(ctx context.Context) error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	taken := a.taken
	a.taken = true
	a.mu.Unlock()
	defer a.cancel()
	if taken {
		return nil // the operation that took it released it
	}
	select {
	case <-a.done:
	default:
		a.cancel() // still waiting for the lock: stop
		<-a.done
	}
	if a.lease == nil {
		return nil // never acquired: nothing to release
	}
	relCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	return a.lease.Release(relCtx)
}
