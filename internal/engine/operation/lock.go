package operation

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/store"
)

// ErrLockLeft marks a run whose lock could not be removed afterwards (it
// expires by itself).
var ErrLockLeft = errors.New("our lock could not be removed; it expires by itself within a minute")

// releaseTimeout bounds the release of a lock after the work, which runs
// on a fresh context: Ctrl-C must still remove our lock.
const releaseTimeout = 30 * time.Second

// mode is the kind of lock an operation takes.
type mode int

const (
	shared mode = iota + 1
	exclusive
)

// withSharedLock runs fn holding a shared lock on r, named op in the lock
// object, for what reads snapshot data and must not have a prune delete
// it meanwhile (the read operations under a ReadLock, and Mount). fn gets
// the repository to read through the lease's fence, and runs under the
// lock's context, cancelled when the lease is lost. The lock is released
// afterwards, also on error or Ctrl-C.
func withSharedLock(ctx context.Context, r *Repo, op string, fn func(ctx context.Context, rr *repo.Repository) error) error {
	return withLock(ctx, r.env, r.st, shared, op, func(ctx context.Context, lease *lock.Lock) error {
		rr, err := r.r.Under(lease)
		if err != nil {
			return err
		}
		return fn(ctx, rr)
	})
}

// withWriter runs fn holding a shared lock on r, named op, with a writer
// under its lease: what adds immutable, uniquely named objects (backup,
// tag, rewrite, a copy's destination).
func withWriter(ctx context.Context, r *Repo, op string, fn func(ctx context.Context, w *repo.Writer) error) error {
	return withLock(ctx, r.env, r.st, shared, op, func(ctx context.Context, lease *lock.Lock) error {
		w, err := r.r.Writer(lease)
		if err != nil {
			return err
		}
		return fn(ctx, w)
	})
}

// withExclusiveWriter runs fn holding the exclusive lock on r, named op,
// with a writer under its lease: what deletes what others read or
// deduplicate against, or rewrites a mutable key (prune, repair index,
// the config's binding).
func withExclusiveWriter(ctx context.Context, r *Repo, op string, fn func(ctx context.Context, w *repo.ExclusiveWriter) error) error {
	return withLock(ctx, r.env, r.st, exclusive, op, func(ctx context.Context, lease *lock.Lock) error {
		w, err := r.r.ExclusiveWriter(lease)
		if err != nil {
			return err
		}
		return fn(ctx, w)
	})
}

// acquire takes the lock of mode m on st, named op.
func acquire(ctx context.Context, env env, st store.Store, m mode, op string) (*lock.Lock, error) {
	if m == exclusive {
		return lock.AcquireExclusive(ctx, st, op, env.lock)
	}
	return lock.AcquireShared(ctx, st, op, env.lock)
}

// withLock takes the lock of mode m (the one Open started taking ahead,
// when it is that lock), runs fn and releases the lock.
func withLock(ctx context.Context, env env, st store.Store, m mode, op string, fn func(ctx context.Context, lease *lock.Lock) error) error {
	l, ahead, err := env.ahead.take(m, op)
	if !ahead {
		l, err = acquire(ctx, env, st, m, op)
	}
	if err != nil {
		return err
	}
	workCtx := l.Context()
	if ahead {
		// The lease's context derives from Open's; the work also stops
		// when this call's context ends.
		var cancel context.CancelCauseFunc
		workCtx, cancel = context.WithCancelCause(workCtx)
		stop := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
		defer stop()
		defer cancel(nil)
	}
	runErr := fn(workCtx, l)
	cause := context.Cause(l.Context())
	lost := cause != nil && errors.Is(cause, lock.ErrLeaseLost)
	switch {
	case runErr != nil && lost && !errors.Is(runErr, lock.ErrLeaseLost):
		runErr = fmt.Errorf("%w (stopped: %w)", runErr, cause)
	case runErr == nil && lost && l.Refused() > 0:
		// The work swallowed a request the lost lease refused: it did
		// less than it thinks, so it must not report success. A loss after
		// the work's last request is no failure: all of it ran in time.
		runErr = fmt.Errorf("%w (%d store requests were refused after it)", cause, l.Refused())
	}
	relCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	if err := l.Release(relCtx); err != nil {
		switch {
		case errors.Is(runErr, lock.ErrLeaseLost):
			return runErr // which already says why the key is left
		case runErr == nil:
			// The work is done and stored; a key left behind only delays
			// others until it expires, so this run still succeeded.
			env.warnf("%v: %v", ErrLockLeft, err)
			return nil
		default:
			return fmt.Errorf("%w (and %w: %w)", runErr, ErrLockLeft, err)
		}
	}
	return runErr
}
