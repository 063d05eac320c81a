package lock

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
)

// Defaults: the TTL is the seed's (other writers honour our locks for that
// long); the rest are ours, chosen so that validate's rules hold with room.
const (
	DefaultTTL             = time.Minute
	DefaultRefreshInterval = 10 * time.Second
	DefaultRetryInterval   = 2 * time.Second
	DefaultRequestTimeout  = 6 * time.Second
	DefaultSafetyMargin    = 30 * time.Second
	DefaultMaxClockSkew    = 5 * time.Second
	DefaultContentionWait  = 5 * time.Second
	// MinSafetyMargin is the smallest SafetyMargin accepted: the work needs
	// time to notice the cancellation and stop writing.
	MinSafetyMargin = 10 * time.Second
	// watchTick bounds how long the watchdog sleeps between clock readings:
	// Go timers do not advance while a laptop sleeps.
	watchTick = time.Second
	// modTimeResolution: stores report modification times truncated to
	// this (S3's Last-Modified, SFTP v3 mtimes).
	modTimeResolution = time.Second
)

// Options tune a lock. The zero value means the defaults.
type Options struct {
	// Clock tells the time (default clock.Real{}).
	Clock clock.Clock
	// TTL is the lease length written into expires_at (default 1 minute):
	// others judge a lock stale once the store's clock is a TTL past its
	// last write.
	TTL time.Duration
	// RefreshInterval is the time between refreshes (default 10 s).
	RefreshInterval time.Duration
	// RetryInterval is the delay before retrying a failed refresh (default
	// 2 s). Refreshes are retried until the lease's safe end.
	RetryInterval time.Duration
	// RequestTimeout bounds each lock request (default 6 s).
	RequestTimeout time.Duration
	// SafetyMargin: the lease ends this long before a TTL has passed since
	// the last successful write was sent (default 30 s). It must exceed
	// MaxClockSkew plus two request timeouts (a refresh in flight and a
	// fenced request in flight).
	SafetyMargin time.Duration
	// MaxClockSkew is the tolerated error of our estimate of the store's
	// clock (its timestamps' resolution, drift between readings; default
	// 5 s). Our own clock's offset does not matter: every judgement of
	// expiry uses the store's clock.
	MaxClockSkew time.Duration
	// ContentionWait: how long a shared acquirer that meets another
	// process's exclusive *attempt* (an intent, no exclusive lock yet)
	// keeps its key and waits for the attempt to back off (default 5 s).
	ContentionWait time.Duration
	// Wait: retry a blocked acquire, or one whose request timed out, with
	// jittered backoff for this long (0 = fail at once).
	Wait time.Duration
	// Trace, when set, is told of every step of a held lease's life and of
	// every write through its fenced store (tests record histories with it).
	Trace func(TraceEvent)
	// Hostname and PID name the holder, "<hostname> (pid <pid>)"
	// (defaults: os.Hostname, os.Getpid).
	Hostname string
	PID      int
}

// withDefaults fills in zero fields and validates the result.
func (o Options) withDefaults() (Options, error) {
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	setDefault(&o.TTL, DefaultTTL)
	setDefault(&o.RefreshInterval, DefaultRefreshInterval)
	setDefault(&o.RetryInterval, DefaultRetryInterval)
	setDefault(&o.RequestTimeout, DefaultRequestTimeout)
	setDefault(&o.SafetyMargin, DefaultSafetyMargin)
	setDefault(&o.MaxClockSkew, DefaultMaxClockSkew)
	setDefault(&o.ContentionWait, DefaultContentionWait)
	if o.Hostname == "" {
		h, err := os.Hostname()
		if err != nil || h == "" {
			h = "unknown-host" // a holder name is for humans; no host name is not fatal
		}
		o.Hostname = h
	}
	if o.PID == 0 {
		o.PID = os.Getpid()
	}
	return o, o.validate()
}

func setDefault(d *time.Duration, def time.Duration) {
	if *d == 0 {
		*d = def
	}
}

// validate checks the rules the lease's safety rests on (docs/lock.md,
// "Time"): the margin covers the store-clock error and two requests in
// flight, and a holder gets three tries to refresh before its safe end.
func (o Options) validate() error {
	var errs []error
	if o.RefreshInterval <= 0 || o.RetryInterval <= 0 || o.RequestTimeout <= 0 || o.MaxClockSkew < 0 ||
		o.ContentionWait < 0 || o.Wait < 0 {
		errs = append(errs, errors.New("intervals and timeouts must be positive (skew, contention wait and wait not negative)"))
	}
	if o.SafetyMargin < MinSafetyMargin {
		errs = append(errs, fmt.Errorf("safety margin %v is below the minimum %v", o.SafetyMargin, MinSafetyMargin))
	}
	if need := o.MaxClockSkew + 2*o.RequestTimeout; o.SafetyMargin <= need {
		errs = append(errs, fmt.Errorf("safety margin %v must exceed the clock skew %v plus two request timeouts of %v (%v)",
			o.SafetyMargin, o.MaxClockSkew, o.RequestTimeout, need))
	}
	if o.TTL <= o.SafetyMargin {
		errs = append(errs, fmt.Errorf("TTL %v must exceed the safety margin %v", o.TTL, o.SafetyMargin))
	}
	if budget := o.RefreshInterval + 2*(o.RequestTimeout+o.RetryInterval); budget > o.TTL-o.SafetyMargin {
		errs = append(errs, fmt.Errorf("refresh interval %v plus two retries (%v timeout + %v pause each) must fit in TTL %v minus safety margin %v",
			o.RefreshInterval, o.RequestTimeout, o.RetryInterval, o.TTL, o.SafetyMargin))
	}
	if o.ContentionWait+o.RequestTimeout >= o.TTL-o.SafetyMargin {
		errs = append(errs, fmt.Errorf("contention wait %v plus a request timeout %v must end before TTL %v minus safety margin %v (an acquire runs under the lease of its first write)",
			o.ContentionWait, o.RequestTimeout, o.TTL, o.SafetyMargin))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("lock options: %w", err)
	}
	return nil
}

// holder is the seed's "<hostname> (pid <pid>)".
func (o Options) holder() string {
	return fmt.Sprintf("%s (pid %d)", o.Hostname, o.PID)
}
