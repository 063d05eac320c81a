package lock

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/store"
)

// Keys of the lock objects: the seed's two, and the intents of exclusive
// contenders (docs/lock.md).
const (
	ExclusiveKey = "index/lock.exclusive"
	SharedPrefix = "index/lock.shared/"
	IntentPrefix = "index/lock.intent/"
	// QueuePrefix holds one entry per acquirer that waits for the lock
	// (Options.Wait), written before its first key: its place in the
	// queue (docs/lock.md, "Writer preference").
	QueuePrefix = "index/lock.queue/"
)

// Info describes one lock object.
type Info struct {
	Key        string
	Operation  string
	Holder     string
	AcquiredAt time.Time
	ExpiresAt  time.Time
	IsShared   bool
	// Stale: the store's clock is a TTL past the object's last write and
	// past its expires_at.
	Stale bool
	// Dead: the holder was a process of this host (same boot, same pid
	// namespace, on Windows session) that no longer exists (List and Break
	// only; judged on Linux and Windows, never elsewhere). break-lock
	// -stale-only removes it at once.
	Dead bool
	// Size and ModTime are the store's (ModTime by the store's clock).
	Size    int64
	ModTime time.Time
	// Age is the time since AcquiredAt by the store's clock (List only).
	Age time.Duration
	// Err is set when the object cannot be read or parsed (for a held
	// Lock's Info: why its lease was lost); Excerpt then holds its first
	// bytes, escaped, for a human to judge, when they were read (not for
	// an object over MaxPayload or not a regular file).
	Err     error
	Excerpt string
}

// heldKey is one object a Lock keeps alive: the shared key, or the
// exclusive key and the intent.
type heldKey struct {
	key     string
	p       payload // last payload written
	data    []byte  // its bytes
	version string  // its store version ("" when the store cannot tell)
}

// Lock is a held lease. Its methods are safe for concurrent use.
type Lock struct {
	st     store.Store
	opts   Options
	caps   store.Capabilities
	shared bool
	sclock *storeClock
	ctx    context.Context // the work's: ends with the caller's, on loss and on Release
	cancel context.CancelCauseFunc
	// leaseCtx is the refresher's and watchdog's: it does not end with the
	// caller's context, because the work may still be writing while it
	// stops, so the lease must be kept until Release.
	leaseCtx    context.Context
	leaseCancel context.CancelFunc
	stop        chan struct{}
	wg          sync.WaitGroup
	once        sync.Once

	// rewriting is held by a refresh while it rewrites the keys. A Check
	// never holds it while it reads (a refresh must not wait for a check's
	// requests: its margins do not count them), but waits for it when
	// its reading overlapped a rewrite (see rewrites).
	rewriting sync.Mutex

	mu   sync.Mutex
	keys []heldKey // keys[0] is the lock's own key (exclusive or shared)
	at   anchor    // when the oldest write still protecting us was sent
	lost error     // why the lease was lost, nil while held
	// rewrites counts the starts and ends of key rewrites, so it is odd
	// while one runs: a Check that finds a key changed knows from it
	// whether that may be our own refresh's write.
	rewrites uint64
	// refused counts the requests the fence refused, or cut short, because
	// the lease was lost or released (see Refused).
	refused int
}

// newLock starts the lease's refresher and watchdog.
func newLock(ctx context.Context, a *acquirer, keys []heldKey, at anchor) *Lock {
	lctx, cancel := context.WithCancelCause(ctx)
	leaseCtx, leaseCancel := context.WithCancel(context.WithoutCancel(ctx))
	l := &Lock{st: a.st, opts: a.opts, caps: a.capabilities(), shared: keys[0].key != ExclusiveKey, sclock: a.sclock, ctx: lctx, cancel: cancel,
		leaseCtx: leaseCtx, leaseCancel: leaseCancel, stop: make(chan struct{}), keys: keys, at: at}
	l.trace(TraceAcquired, "")
	l.wg.Add(2)
	go l.refresher()
	go l.watchdog()
	return l
}

// Context is derived from the acquiring context and is cancelled, with a
// cause wrapping ErrLeaseLost that says why, when the lease is lost. Run the
// locked work under it. Release cancels it too. The lease itself is kept
// until Release, also after the acquiring context ends (Ctrl-C): work that
// is still stopping is still covered, and Release can then remove the key.
func (l *Lock) Context() context.Context { return l.ctx }

// Info describes the lock as last written.
func (l *Lock) Info() Info {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := l.keys[0]
	return infoOf(k.key, k.p, false, l.lost)
}

// Refused is the number of requests through the lease's fence that were
// refused, or cut short with an error, because the lease was lost or
// released. Work that ends without an error although some were refused
// has swallowed an error somewhere, and did less than it thinks.
func (l *Lock) Refused() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.refused
}

// refuse counts a refused request, to key ("" when it has none).
func (l *Lock) refuse(key string) {
	l.mu.Lock()
	l.refused++
	l.mu.Unlock()
	l.trace(TraceRefused, key)
}

// Shared reports whether this is a shared lock.
func (l *Lock) Shared() bool { return l.shared }

// StoreNow is a lower bound of the store's current time, from the lock's
// own writes: what prune compares object ages with.
func (l *Lock) StoreNow() time.Time { return l.sclock.mustNow() }

func infoOf(key string, p payload, stale bool, err error) Info {
	return Info{Key: key, Operation: p.Operation, Holder: p.Holder, AcquiredAt: p.AcquiredAt,
		ExpiresAt: p.ExpiresAt, IsShared: p.IsShared, Stale: stale, Err: err}
}

// Check returns nil when the lease is still within its safe end and every
// key still holds our last write. Engines call it before a snapshot write
// and at the end of what they write, a restore only to tell damage from a
// lease lost; a failed check loses the lease.
func (l *Lock) Check(ctx context.Context) error {
	ctx, cancel, err := l.requestContext(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	for {
		l.mu.Lock()
		keys, gen := append([]heldKey(nil), l.keys...), l.rewrites
		l.mu.Unlock()
		changed, err := l.firstChanged(ctx, keys)
		if err != nil {
			return err
		}
		if changed == "" {
			return l.valid()
		}
		l.mu.Lock()
		overlapped := gen%2 == 1 || l.rewrites != gen
		l.mu.Unlock()
		if !overlapped {
			return l.lose(fmt.Errorf("%w: %s was removed or replaced by another process (break-lock?)", ErrLeaseLost, changed))
		}
		// A refresh rewrote keys while we read them: what we found may be
		// its write. Let it finish and compare again with its versions.
		l.rewriting.Lock()
		l.rewriting.Unlock() //nolint:staticcheck // SA2001: only waits for the rewrite in progress to end
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("checking lock: %w", err)
		}
	}
}

// firstChanged returns the first of keys whose key no longer holds our
// write, or "" when every one does.
func (l *Lock) firstChanged(ctx context.Context, keys []heldKey) (string, error) {
	for _, k := range keys {
		ours, err := l.stillOurs(ctx, k)
		if err != nil {
			return "", fmt.Errorf("checking lock %s: %w", k.key, err)
		}
		if !ours {
			return k.key, nil
		}
	}
	return "", nil
}

// remaining is the time left until the lease's safe end.
func (l *Lock) remaining() time.Duration {
	l.mu.Lock()
	at := l.at
	l.mu.Unlock()
	return l.opts.TTL - l.opts.SafetyMargin - at.elapsed(l.opts.Clock)
}

// valid returns the loss error once the lease is lost or past its safe end
// (losing it then).
func (l *Lock) valid() error {
	if err := l.lostErr(); err != nil {
		return err
	}
	if l.remaining() > 0 {
		return nil
	}
	return l.lose(fmt.Errorf("%w: %s not refreshed in time: its last write was sent more than %v ago (TTL %v minus safety margin %v; did this machine sleep or lose the store?)",
		ErrLeaseLost, l.Info().Key, l.opts.TTL-l.opts.SafetyMargin, l.opts.TTL, l.opts.SafetyMargin))
}

// stillOurs tells whether k's key holds our last write: by version where the
// store's versions are exact (it declares compare-and-swap), else by content
// (which differs on every write: the payload's nonce).
func (l *Lock) stillOurs(ctx context.Context, k heldKey) (bool, error) {
	return stillOurs(ctx, l.st, l.caps, k)
}

func stillOurs(ctx context.Context, st store.Store, caps store.Capabilities, k heldKey) (bool, error) {
	if caps.CompareAndSwap && k.version != "" {
		info, err := st.Stat(ctx, k.key)
		if errors.Is(err, store.ErrNotFound) || unreadable(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		return info.Version == k.version, nil
	}
	cur, err := st.Get(ctx, k.key, MaxPayload)
	if errors.Is(err, store.ErrNotFound) || unreadable(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return bytes.Equal(cur, k.data), nil
}

// lose records the first reason the lease was lost and cancels Context.
func (l *Lock) lose(err error) error {
	l.mu.Lock()
	first := l.lost == nil
	if first {
		l.lost = err
	}
	err = l.lost
	l.mu.Unlock()
	if first {
		l.trace(TraceLost, "")
	}
	l.cancel(err)
	l.leaseCancel() // a lost lease is never refreshed again
	return err
}

func (l *Lock) lostErr() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lost
}

// releaseAttempts bounds the tries to delete our keys on Release.
const releaseAttempts = 3

// Release stops refreshing, cancels Context and deletes our keys: the
// exclusive one only if it still holds our write, and none once the lease
// is past its safe end (others may own the key by then): that case returns
// an error wrapping ErrLeaseLost, as the keys stay until they expire. Every
// Lock must be released; calling Release again does nothing.
func (l *Lock) Release(ctx context.Context) error {
	var err error
	l.once.Do(func() {
		// The holder's work under the lock ends here, before its keys go.
		l.trace(TraceReleased, "")
		close(l.stop)
		l.waitLease(ctx)
		// A lock left behind by one failed request blocks everyone else
		// until it expires: try a few times, while the lease still holds.
		for attempt := 1; ; attempt++ {
			err = l.release(ctx)
			if err == nil || errors.Is(err, ErrLeaseLost) || attempt == releaseAttempts {
				break
			}
			if clock.Sleep(ctx, l.opts.Clock, time.Duration(attempt)*l.opts.RetryInterval/4) != nil {
				break
			}
		}
		l.cancel(context.Canceled)
		l.leaseCancel()
	})
	return err
}

// waitLease waits for the refresher and watchdog to stop. A refresh still
// in flight is let finish, so that we know what the keys hold, unless ctx
// ends first.
func (l *Lock) waitLease(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		l.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		l.leaseCancel()
		<-done
	}
}

// release deletes our keys, the lock's own key first (the intent last, so
// that an exclusive holder keeps out other contenders to the end). A lease
// lost because its keys were removed or replaced leaves nothing of ours to
// delete; one past its safe end leaves its keys to expire.
func (l *Lock) release(ctx context.Context) error {
	l.mu.Lock()
	keys := append([]heldKey(nil), l.keys...)
	l.mu.Unlock()
	for _, k := range keys {
		if l.remaining() <= 0 {
			// The key may already be someone else's; it expires on its own.
			return fmt.Errorf("lock %s left in place: %w", k.key, l.valid())
		}
		rctx, cancel := context.WithTimeout(ctx, l.opts.RequestTimeout)
		err := l.deleteOurs(rctx, k)
		cancel()
		if err != nil {
			return fmt.Errorf("releasing lock %s: %w", k.key, err)
		}
	}
	return nil
}

// deleteOurs deletes k's key; the exclusive key only if it still holds our
// write (after a break-lock it may be another process's). Shared keys and
// intents are uniquely named: only we ever write them.
func (l *Lock) deleteOurs(ctx context.Context, k heldKey) error {
	if k.key == ExclusiveKey {
		ours, err := l.stillOurs(ctx, k)
		if err != nil || !ours {
			return err
		}
	}
	return store.DeleteAbsentOK(ctx, l.st, k.key)
}
