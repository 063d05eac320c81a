package store

import (
	"math"
	"math/rand/v2"
	"time"
)

// Backoff times the retries of an operation that failed in a way that may
// pass (a server restarting, a network gone for a moment): the S3 store's
// requests and the SFTP store's reconnects follow it.
//
// The nominal wait before retry n (1 for the first) is First, doubled for
// each retry before it, at most Max. The wait actually taken is drawn at
// random between half the nominal wait and the nominal wait ("equal
// jitter"): many hosts started by cron at the same minute that met the same
// outage then come back spread over the second half of each wait, not all
// at once against a server that has just come back, while no wait is
// longer than the nominal one, so the bounds of the schedule (and of the
// budget) stay those of the nominal waits.
//
// A retry is refused when it is past Retries, or when its drawn wait would
// end more than Budget after the operation's first attempt began. The
// budget is checked on the drawn wait, the one actually taken, not on the
// nominal one: then no retry starts past Budget, and none that would start
// within it is refused; the count of retries that fit varies a little from
// one run (and one host) to the next, which also spreads the last retries.
//
// The zero value retries at once, without end: set First and a limit.
type Backoff struct {
	// First is the nominal wait before the first retry.
	First time.Duration
	// Max caps the nominal wait (0: no cap).
	Max time.Duration
	// Budget bounds when a retry may start, measured from the first
	// attempt (0: no bound; negative: no retries).
	Budget time.Duration
	// Retries bounds the count of retries (0: no bound; negative: no
	// retries).
	Retries int
	// Rand returns the jitter's random numbers, in [0, 1]: 0 draws half
	// the nominal wait, 1 the nominal wait (values outside are clamped).
	// Nil means math/rand/v2's Float64. Tests pass a fixed function for
	// exact waits; a Rand called from several goroutines must be safe for
	// that.
	Rand func() float64
}

// Nominal returns the nominal wait before retry n (1 for the first): First,
// doubled for each retry before it, at most Max.
func (b Backoff) Nominal(n int) time.Duration {
	w := b.First
	for i := 1; i < n; i++ {
		if (b.Max > 0 && w >= b.Max) || w > math.MaxInt64/2 {
			break
		}
		w *= 2
	}
	if b.Max > 0 {
		w = min(w, b.Max)
	}
	return w
}

// Wait draws the wait before retry n (1 for the first) of an operation
// whose first attempt began elapsed ago, within [Nominal(n)/2, Nominal(n)],
// and reports whether that retry is left: n is within Retries and the wait
// ends within Budget. Each call draws anew: a caller that needs the wait
// twice keeps the first answer.
func (b Backoff) Wait(n int, elapsed time.Duration) (time.Duration, bool) {
	if b.Retries < 0 || b.Budget < 0 || (b.Retries > 0 && n > b.Retries) {
		return 0, false
	}
	nominal := b.Nominal(n)
	r := rand.Float64
	if b.Rand != nil {
		r = b.Rand
	}
	x := r()
	switch {
	case !(x > 0): // NaN too
		x = 0
	case x > 1:
		x = 1
	}
	half := nominal / 2
	wait := half + time.Duration(x*float64(nominal-half))
	if b.Budget > 0 && wait > b.Budget-elapsed {
		return wait, false
	}
	return wait, true
}

// MaxRetries returns the most retries that Wait can allow: those whose
// shortest waits (half the nominal ones) fit in Budget even if the attempts
// take no time, at most Retries. It is -1 when neither bounds them.
func (b Backoff) MaxRetries() int {
	switch {
	case b.Retries < 0 || b.Budget < 0:
		return 0
	case b.Budget == 0 && b.Retries == 0:
		return -1
	case b.Budget == 0:
		return b.Retries
	}
	var total time.Duration
	n := 0
	for ; b.Retries == 0 || n < b.Retries; n++ {
		shortest := b.Nominal(n+1) / 2
		if shortest == 0 && b.Nominal(n+2) == b.Nominal(n+1) {
			// Waits of nothing from here on: the budget never ends
			// them.
			if b.Retries > 0 {
				return b.Retries
			}
			return -1
		}
		if shortest > b.Budget-total {
			break
		}
		total += shortest
	}
	return n
}
