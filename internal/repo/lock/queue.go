package lock

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cloudstic/cloudstic/internal/store"
)

// Writer preference (docs/lock.md): an acquirer that waits for the lock
// (Options.Wait) first writes a queue entry, kept until it has the lock or
// gives up; its place in the queue is the store time at which it began and
// a ticket, at the start of every key name it writes. A waiting exclusive
// acquirer keeps its intent, rewritten every poll, while shared holders
// drain; shared acquirers queued after a waiting exclusive one do not
// start, and exclusive ones queued after a waiting shared one wait for it.
// Safety never rests on who goes first: an exclusive acquirer passes only
// with no other live intent and no live shared key after writing its own
// intent, and a shared one only with no live exclusive key after writing its
// key (docs/lock/lock.pml checks both with the queue rules).

// firstPoll is the first pause of a waiting exclusive acquirer; it doubles
// up to RefreshInterval, which bounds how late the waiter notices that the
// last shared holder has gone.
const firstPoll = 250 * time.Millisecond

// waitLeft is how much of Options.Wait is left.
func (a *acquirer) waitLeft() time.Duration { return a.opts.Wait - a.started.elapsed(a.opts.Clock) }

// queuePlace is the place in the queue of one of our key names
// ("<time>-<8 hex ticket><8 hex>"): the time and the ticket, which sort as
// the times do; "" for a name of another form.
func queuePlace(key string) string {
	name := key[strings.LastIndex(key, "/")+1:]
	i := strings.LastIndex(name, "-")
	if i < 0 || len(name)-i != 17 {
		return ""
	}
	return name[:i+9]
}

// before reports whether the object o (an intent, queue entry or shared key) is
// queued before our key ours (an intent or a shared key): the earlier time;
// at the same time, exclusive before shared, then the smaller ticket. An
// unreadable one, one named otherwise, and one of the same place (another
// acquirer's: ours are never compared) go first.
func before(o object, ours string) bool {
	p, mine := queuePlace(o.key), queuePlace(ours)
	if o.bad != nil || p == "" || mine == "" {
		return true
	}
	if pt, mt := p[:len(p)-9], mine[:len(mine)-9]; pt != mt {
		return pt < mt
	}
	theirs := strings.HasPrefix(o.key, SharedPrefix) || (isQueued(o.key) && o.p.IsShared)
	if our := strings.HasPrefix(ours, SharedPrefix); theirs != our {
		return our
	}
	return p <= mine
}

// exclusiveAhead keeps the queue entries among queued of exclusive
// acquirers queued before our key ours (and unreadable ones).
func exclusiveAhead(queued []object, ours string) []object {
	var out []object
	for _, o := range queued {
		if (o.bad != nil || !o.p.IsShared) && before(o, ours) {
			out = append(out, o)
		}
	}
	return out
}

// queueAhead returns the refusal naming the waiting exclusive acquirers
// queued before our shared key ours ("queued for an exclusive lock by
// ..."), nil when there is none.
func (a *acquirer) queueAhead(ctx context.Context, ours string) error {
	ctx, cancel := context.WithTimeout(ctx, a.opts.RequestTimeout)
	defer cancel()
	queued, _, err := liveObjects(ctx, a.st, QueuePrefix, a.entry.key, a.storeNow, a.opts)
	if err != nil {
		return err
	}
	return refusalOf(exclusiveAhead(queued, ours))
}

// queuedBefore keeps the objects among live queued before our key ours.
func queuedBefore(live []object, ours string) []object {
	var out []object
	for _, o := range live {
		if before(o, ours) {
			out = append(out, o)
		}
	}
	return out
}

// refusalOf is the refusal naming objs, nil when there is none.
func refusalOf(objs []object) error {
	var errs []error
	for _, o := range objs {
		errs = append(errs, heldError(o))
	}
	return joinRefusals(errs...)
}

// liveObjects reads the objects under prefix but except, split into the
// live or unreadable ones and the stale ones.
func liveObjects(ctx context.Context, st store.Store, prefix, except string, lb func() time.Time, opts Options) (live, stale []object, err error) {
	objs, err := readPrefix(ctx, st, prefix, except)
	if err != nil {
		return nil, nil, err
	}
	for _, o := range objs {
		if o.blocks(lb(), opts) != nil {
			live = append(live, o)
		} else {
			stale = append(stale, o)
		}
	}
	return live, stale, nil
}

// exclusiveOnce: write our intent, then take the lock in rounds (see
// exclusiveRound); between rounds a waiting acquirer keeps its intent,
// rewritten before each round, until Options.Wait has elapsed.
func (a *acquirer) exclusiveOnce(ctx context.Context) (*Lock, error) {
	if err := a.sclock.sample(ctx, a.st); err != nil {
		return nil, err
	}
	ik, at, err := a.putOwn(ctx, a.newKey(IntentPrefix), a.newPayload(false))
	if err != nil {
		return nil, err
	}
	poll := firstPoll
	for {
		l, wait, soon, err := a.exclusiveRound(ctx, ik, at)
		if !wait {
			return l, err
		}
		left := a.waitLeft()
		if left <= 0 {
			return nil, a.withdraw(ctx, ik.key, err)
		}
		// Younger contenders withdraw when they see our intent: look
		// again soon. Shared holders take longer: back off to one
		// refresh period.
		if soon {
			poll = firstPoll
		}
		if werr := a.pause(ctx, min(jitter(poll), left)); werr != nil {
			return nil, a.withdraw(ctx, ik.key, fmt.Errorf("waiting for the lock: %w (last: %w)", werr, err))
		}
		poll = min(2*poll, a.opts.RefreshInterval)
		a.requeue(ctx, false)
		if ik, at, err = a.rewriteIntent(ctx, ik); err != nil {
			return nil, err
		}
	}
}

// exclusiveRound checks that no other live intent and no live shared lock
// exists, claims the seed's exclusive key and looks at the shared locks
// again (docs/lock.md, "Exclusive acquire"). wait: we keep our intent and
// try again (a waiting acquirer blocked only by shared holders, or by
// intents queued after ours); otherwise a failed round has withdrawn it.
// soon: every blocker was queued after us, and withdraws on seeing our
// intent (a backup refused by us leaves its key for a moment).
func (a *acquirer) exclusiveRound(ctx context.Context, ik heldKey, at anchor) (l *Lock, wait, soon bool, err error) {
	waiting := a.opts.Wait > 0
	var stale []object
	err = a.step(ctx, at, func(ctx context.Context) error {
		live, old, err := liveObjects(ctx, a.st, IntentPrefix, ik.key, a.storeNow, a.opts)
		stale = old
		if err != nil {
			return err
		}
		if len(live) > 0 {
			// Another attempt, or a holder? A holder has the exclusive
			// key too: then fail at once instead of retrying.
			ierr := refusalOf(live)
			if xerr := exclusiveBlocks(ctx, a.st, nil, a.storeNow, a.opts); xerr != nil {
				return joinRefusals(xerr, ierr)
			}
			wait = waiting && len(queuedBefore(live, ik.key)) == 0
			soon = wait
			return ierr
		}
		// The queue: an exclusive acquirer queued before us goes first
		// (withdraw: it needs no other intent); a shared one too (wait:
		// it does not defer to us).
		queued, old, err := liveObjects(ctx, a.st, QueuePrefix, a.entry.key, a.storeNow, a.opts)
		stale = append(stale, old...)
		if err != nil {
			return err
		}
		if ahead := queuedBefore(queued, ik.key); len(ahead) > 0 {
			wait = waiting && len(exclusiveAhead(ahead, ik.key)) == 0
			return refusalOf(ahead)
		}
		live, old, err = liveObjects(ctx, a.st, SharedPrefix, "", a.storeNow, a.opts)
		stale = append(stale, old...)
		if err != nil {
			return err
		}
		wait = waiting && len(live) > 0
		soon = wait && len(queuedBefore(live, ik.key)) == 0
		return refusalOf(live)
	})
	if err != nil {
		if wait && !failed(err) {
			return nil, true, soon, err
		}
		return nil, false, false, a.withdraw(ctx, ik.key, err)
	}
	var xk heldKey
	err = a.step(ctx, at, func(ctx context.Context) error {
		var err error
		xk, err = a.claim(ctx)
		return err
	})
	if err != nil {
		return nil, false, false, a.withdraw(ctx, ik.key, err)
	}
	err = a.step(ctx, at, func(ctx context.Context) error {
		return blocking(ctx, a.st, SharedPrefix, "", a.storeNow, a.opts)
	})
	if err != nil {
		err = a.withdrawExclusive(ctx, xk, err)
		if waiting && !failed(err) {
			return nil, true, true, err // a shared key slipped in: look again soon
		}
		return nil, false, false, a.withdraw(ctx, ik.key, err)
	}
	l = newLock(ctx, a, []heldKey{xk, ik}, at)
	l.sweep(stale)
	return l, false, false, nil
}

// rewriteIntent writes our waiting intent again (see rewriteOwn) and
// returns it with the new provisional lease; on failure it withdraws it.
func (a *acquirer) rewriteIntent(ctx context.Context, ik heldKey) (heldKey, anchor, error) {
	k, at, err := a.rewriteOwn(ctx, ik)
	if err != nil {
		return ik, at, a.withdraw(ctx, ik.key, err)
	}
	return k, at, nil
}

// rewriteOwn writes our uniquely named key (a waiting intent, a queue
// entry) again with a fresh expiry and nonce; its name and acquired_at
// stay (our place in the queue). Nothing is compared: only we write it, and
// every round of an acquire looks at everything again after writing it.
func (a *acquirer) rewriteOwn(ctx context.Context, k heldKey) (heldKey, anchor, error) {
	p := k.p
	p.ExpiresAt = a.storeNow().Add(a.opts.TTL).UTC()
	p.Nonce = randomHex()
	data := p.encode()
	at := anchorNow(a.opts.Clock)
	rctx, cancel := context.WithTimeout(ctx, a.opts.RequestTimeout)
	defer cancel()
	info, err := a.st.Put(rctx, k.key, data, store.PutOptions{})
	if err != nil {
		return k, at, fmt.Errorf("rewriting lock %s: %w", k.key, err)
	}
	a.sclock.observe(info.ModTime)
	return heldKey{key: k.key, p: p, data: data, version: info.Version}, at, nil
}

// requeue keeps our queue entry (Options.Wait only): it writes it before
// our first other key, and again once a refresh period has passed since
// its last write, so that it stays live however long we wait. A failure is
// ignored (the next call tries again): without a live entry we only lose
// our place, and the attempt that follows meets the same store.
func (a *acquirer) requeue(ctx context.Context, shared bool) {
	switch {
	case a.opts.Wait <= 0:
		return
	case a.entry.key == "":
		if a.sclock.sample(ctx, a.st) != nil {
			return
		}
		if k, at, err := a.putOwn(ctx, a.newKey(QueuePrefix), a.newPayload(shared)); err == nil {
			a.entry, a.entryAt = k, at
		}
	case a.entryAt.elapsed(a.opts.Clock) >= a.opts.RefreshInterval:
		if k, at, err := a.rewriteOwn(ctx, a.entry); err == nil {
			a.entry, a.entryAt = k, at
		}
	}
}

// dequeue removes our queue entry: we hold the lock (whose keys keep the
// others out) or gave up.
func (a *acquirer) dequeue(ctx context.Context) {
	if a.entry.key != "" {
		_ = a.withdraw(ctx, a.entry.key, nil) // one left behind expires: it costs others a TTL's wait at most
	}
}
