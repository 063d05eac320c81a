package lock

import (
	"errors"
)

// sweepMax bounds the stale objects one exclusive acquire removes, so that
// a prune after a crashed fleet starts promptly; the next takes the rest.
const sweepMax = 100

// sweep removes the stale intents and shared keys the exclusive acquire
// read (judged by the store's clock, as every acquire judges them): their
// holders are past their lease's safe end, so nobody counts on them, and
// without this they stay until someone runs break-lock -stale-only. Only
// the exclusive holder does it, through its fence (nothing is deleted past
// its lease), and none of it is needed for safety: a failure is left for
// the next prune.
func (l *Lock) sweep(stale []object) {
	fenced := l.Fence(l.st)
	for i, o := range stale {
		if i == sweepMax || l.ctx.Err() != nil || l.valid() != nil {
			return // the lease's loss is the work's to report
		}
		if err := fenced.Delete(l.ctx, o.key); errors.Is(err, ErrLeaseLost) {
			return
		}
	}
}

// failed reports whether err is a failed request: neither nil nor a
// refusal.
func failed(err error) bool {
	var r *refusal
	return err != nil && !errors.As(err, &r)
}
