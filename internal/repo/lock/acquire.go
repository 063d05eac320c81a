package lock

import (
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/store"
)

const (
	// claimAttempts bounds how often one acquire re-examines an exclusive
	// key that keeps changing under it.
	claimAttempts = 4
	// contentionAttempts bounds the tries of one exclusive acquire that
	// keeps meeting other exclusive attempts (intents), each followed by a
	// jittered pause, before it reports the conflict.
	contentionAttempts = 5
	// firstBackoff is the first pause after contention; it doubles.
	firstBackoff = 100 * time.Millisecond
)

// acquirer performs one acquisition.
type acquirer struct {
	st   store.Store
	opts Options
	// caps are the store's capabilities, asked for at the first write
	// that depends on them (capabilities): an S3 store answers only once
	// its probe has run, and the reads before that write need not wait.
	caps      store.Capabilities
	capsKnown bool
	operation string
	sclock    *storeClock
	// obs judges blockers' processes; proc is ours, recorded in our
	// payloads (nil when the platform cannot tell, or the caller named
	// another holder in Options).
	obs  observer
	proc *procID
	// queued is our place in the queue (docs/lock.md, "Writer
	// preference"): the store's time when this acquire began and a random
	// ticket, the start of the name of every key it writes.
	queued string
	// entry is our queue entry (Options.Wait only; key "" when none) and
	// entryAt when it was last written.
	entry   heldKey
	entryAt anchor
	// started is when the acquire began: Options.Wait counts from it.
	started anchor
}

// AcquireShared takes a shared lock for operation (backup, restore): blocked
// only by a live exclusive lock or exclusive attempt.
func AcquireShared(ctx context.Context, st store.Store, operation string, opts Options) (*Lock, error) {
	a, err := newAcquirer(st, operation, opts)
	if err != nil {
		return nil, err
	}
	return a.withWait(ctx, true, a.shared)
}

// AcquireExclusive takes the exclusive lock for operation (prune): blocked by
// any live lock.
func AcquireExclusive(ctx context.Context, st store.Store, operation string, opts Options) (*Lock, error) {
	a, err := newAcquirer(st, operation, opts)
	if err != nil {
		return nil, err
	}
	return a.withWait(ctx, false, a.exclusive)
}

func newAcquirer(st store.Store, operation string, opts Options) (*acquirer, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if operation == "" {
		return nil, errors.New("lock: empty operation name")
	}
	// Our own payload must be readable by others: names of this length
	// are no host name or operation, but refuse them before writing.
	if n := len(operation) + len(opts.holder()); n > MaxPayload/2 {
		return nil, fmt.Errorf("lock: operation and holder names of %d bytes make a lock object over %d bytes", n, MaxPayload)
	}
	a := &acquirer{st: st, opts: opts, operation: operation,
		sclock: newStoreClock(opts.Clock), obs: newObserver(platformProcesses()), started: anchorNow(opts.Clock)}
	if self := a.obs.self; a.obs.ok && self.Host == opts.Hostname && self.PID == opts.PID {
		a.proc = &self
	}
	return a, nil
}

// capabilities returns the store's capabilities, asking for them once.
func (a *acquirer) capabilities() store.Capabilities {
	if !a.capsKnown {
		a.caps, a.capsKnown = a.st.Capabilities(), true
	}
	return a.caps
}

// withWait runs attempt once, or, with Options.Wait, retries a blocked one
// with jittered exponential backoff until Wait has elapsed. An attempt
// whose lock request went unanswered is retried too: a user who asked to
// wait for the lock expects a slow moment of the network to be waited out
// as well. Every failed attempt has withdrawn what it wrote.
func (a *acquirer) withWait(ctx context.Context, shared bool, attempt func(context.Context) (*Lock, error)) (*Lock, error) {
	if a.opts.Wait > 0 {
		defer a.dequeue(ctx)
	}
	backoff := 250 * time.Millisecond
	for {
		a.requeue(ctx, shared)
		l, err := attempt(ctx)
		var r *refusal
		if errors.As(err, &r) {
			r.observe(a.obs)
		}
		if err == nil || a.opts.Wait <= 0 || !worthWaiting(ctx, err) {
			return l, err
		}
		left := a.waitLeft()
		if left <= 0 {
			return nil, err
		}
		if werr := a.pause(ctx, min(jitter(backoff), left)); werr != nil {
			return nil, fmt.Errorf("waiting for the lock: %w (last: %w)", werr, err)
		}
		backoff = min(2*backoff, 8*time.Second)
	}
}

// worthWaiting tells whether a failed attempt may succeed later: the lock
// was held, or one of its requests timed out (while the caller's context
// is still alive) or ran out of the acquire's provisional lease.
func worthWaiting(ctx context.Context, err error) bool {
	if errors.Is(err, ErrLocked) {
		return true
	}
	if ctx.Err() != nil {
		return false
	}
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, store.ErrTimeout) || errors.Is(err, ErrLeaseLost)
}

// jitter is a random duration between d/2 and d.
func jitter(d time.Duration) time.Duration { return d/2 + mrand.N(d/2+1) }

func (a *acquirer) pause(ctx context.Context, d time.Duration) error {
	return clock.Sleep(ctx, a.opts.Clock, d)
}

// storeNow is the store's time (lower bound); the acquire sampled it first.
func (a *acquirer) storeNow() time.Time { return a.sclock.mustNow() }

// newPayload is our payload, acquired now by the store's clock.
func (a *acquirer) newPayload(shared bool) payload {
	now := a.storeNow()
	return payload{Operation: a.operation, Holder: a.opts.holder(), AcquiredAt: now.UTC(),
		ExpiresAt: now.Add(a.opts.TTL).UTC(), IsShared: shared, Nonce: randomHex(), Process: a.proc}
}

// newKey names a new shared key, intent or queue entry: the store's time
// when this acquire began (as the seed names shared keys), then 16 hex
// digits: 8 of our ticket, the same for every key of this acquire
// (together, our place in the queue), and 8 random, so that names never
// collide.
func (a *acquirer) newKey(prefix string) string {
	if a.queued == "" {
		a.queued = a.storeNow().UTC().Format(timeLayout) + "-" + randomHex()[:8]
	}
	return prefix + a.queued + randomHex()[:8]
}

// putOwn writes our uniquely named key (create-if-absent where the store
// can) and returns it with the moment the write was sent: the provisional
// lease under which the rest of the acquire runs.
func (a *acquirer) putOwn(ctx context.Context, key string, p payload) (heldKey, anchor, error) {
	data := p.encode()
	at := anchorNow(a.opts.Clock)
	rctx, cancel := context.WithTimeout(ctx, a.opts.RequestTimeout)
	defer cancel()
	info, err := a.st.Put(rctx, key, data, store.PutOptions{IfAbsent: a.capabilities().CreateIfAbsent})
	if err != nil {
		// The write may have landed with its answer lost: remove it, or
		// it would block others until it expires.
		return heldKey{}, at, a.withdraw(ctx, key, fmt.Errorf("writing lock %s: %w", key, err))
	}
	a.sclock.observe(info.ModTime)
	return heldKey{key: key, p: p, data: data, version: info.Version}, at, nil
}

// step runs one stage of an acquire under the provisional lease that began
// at at: refused past its safe end, bounded by RequestTimeout.
func (a *acquirer) step(ctx context.Context, at anchor, fn func(context.Context) error) error {
	left := a.opts.TTL - a.opts.SafetyMargin - at.elapsed(a.opts.Clock)
	if left <= 0 {
		return fmt.Errorf("%w: the acquire took longer than the lease allows (%v)", ErrLeaseLost, a.opts.TTL-a.opts.SafetyMargin)
	}
	ctx, cancel := context.WithTimeout(ctx, min(a.opts.RequestTimeout, left))
	defer cancel()
	return fn(ctx)
}

// shared: write our key, then look at the exclusive key, the intents and
// the queue. A waiting exclusive acquirer queued before us goes first: we
// withdraw at once (and wait with Options.Wait). Another intent queued
// before us is an exclusive attempt that will back off when it sees our
// key: we keep the key and wait ContentionWait for it to go. Intents queued
// after us wait for us.
func (a *acquirer) shared(ctx context.Context) (*Lock, error) {
	if err := a.sclock.sample(ctx, a.st); err != nil {
		return nil, err
	}
	key := a.newKey(SharedPrefix)
	// The queue before our key: refused by a waiting prune queued before
	// us, we write nothing (a key written and withdrawn would make the
	// prune look again).
	if err := a.queueAhead(ctx, key); err != nil {
		return nil, err
	}
	k, at, err := a.putOwn(ctx, key, a.newPayload(true))
	if err != nil {
		return nil, err
	}
	backoff := firstBackoff
	for {
		err := a.step(ctx, at, a.sharedChecks(key))
		if err == nil {
			return newLock(ctx, a, []heldKey{k}, at), nil
		}
		if !errors.Is(err, errContended) || at.elapsed(a.opts.Clock) >= a.opts.ContentionWait {
			return nil, a.withdraw(ctx, key, err)
		}
		if err := a.pause(ctx, jitter(backoff)); err != nil {
			return nil, a.withdraw(ctx, key, err)
		}
		backoff = min(2*backoff, time.Second)
	}
}

// sharedChecks returns the check of a shared acquire's write-then-check:
// the exclusive key and the intents, read at once. Each only has to be
// read after our key was written (docs/lock.md, "Why it is safe"), not
// after the other: the model (docs/lock/lock.pml) applies them in either
// order, and over a network the pair then costs one round trip, not two.
// Both are read even when the exclusive key blocks: a refusal names every
// holder.
func (a *acquirer) sharedChecks(key string) func(context.Context) error {
	return func(ctx context.Context) error {
		var live []object
		var lerr error
		listed := make(chan struct{})
		go func() {
			defer close(listed)
			live, _, lerr = liveObjects(ctx, a.st, IntentPrefix, "", a.storeNow, a.opts)
		}()
		xerr := exclusiveBlocks(ctx, a.st, nil, a.storeNow, a.opts)
		<-listed
		if failed(xerr) {
			return xerr
		}
		if lerr != nil {
			return lerr
		}
		return joinRefusals(xerr, refusalOf(queuedBefore(live, key)))
	}
}

// exclusive tries exclusiveOnce, again after a jittered pause while it
// meets other exclusive attempts.
func (a *acquirer) exclusive(ctx context.Context) (*Lock, error) {
	backoff := firstBackoff
	for attempt := 1; ; attempt++ {
		l, err := a.exclusiveOnce(ctx)
		if err == nil || !errors.Is(err, errContended) || attempt == contentionAttempts {
			return l, err
		}
		if err := a.pause(ctx, jitter(backoff)); err != nil {
			return nil, err
		}
		backoff *= 2
	}
}

// claim writes the seed's exclusive key: created if absent, replacing a
// stale one by compare-and-swap on the version judged, or (create-if-absent
// only) deleting it if unchanged and creating it again, or (neither) by a
// plain write verified by reading it back. A live or unreadable key is the
// conflict error.
func (a *acquirer) claim(ctx context.Context) (heldKey, error) {
	for range claimAttempts {
		cur, err := statGet(ctx, a.st, ExclusiveKey, false)
		if err != nil {
			return heldKey{}, err
		}
		var opts store.PutOptions
		switch {
		case cur.present:
			if err := cur.blocks(a.storeNow(), a.opts); err != nil {
				return heldKey{}, err
			}
			if a.capabilities().CompareAndSwap && cur.info.Version != "" {
				opts.IfVersion = cur.info.Version
			} else if a.capabilities().CreateIfAbsent {
				if _, err := deleteIfSame(ctx, a.st, ExclusiveKey, cur.data); err != nil {
					return heldKey{}, err
				}
				continue // create it on the next turn
			}
		case a.capabilities().CreateIfAbsent:
			opts.IfAbsent = true
		}
		p := a.newPayload(false)
		data := p.encode()
		info, err := a.st.Put(ctx, ExclusiveKey, data, opts)
		if errors.Is(err, store.ErrExists) || errors.Is(err, store.ErrVersionMismatch) || errors.Is(err, store.ErrNotFound) {
			continue // someone else moved first: look again
		}
		if err != nil {
			return heldKey{}, fmt.Errorf("writing exclusive lock: %w", err)
		}
		a.sclock.observe(info.ModTime)
		k := heldKey{key: ExclusiveKey, p: p, data: data, version: info.Version}
		if !a.capabilities().CreateIfAbsent {
			if ours, err := stillOurs(ctx, a.st, a.capabilities(), k); err != nil || !ours {
				return heldKey{}, a.lostRace(ctx, err)
			}
		}
		return k, nil
	}
	return heldKey{}, &conflictError{msg: "repository lock " + ExclusiveKey + " kept changing while we tried to acquire it",
		errs: []error{ErrLocked}}
}
