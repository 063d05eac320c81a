package lock

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
)

// Defaults from the seed (TTL, refresh) and docs/lock.md (the rest).
const (
	DefaultTTL             = time.Minute
	DefaultRefreshInterval = 30 * time.Second
	DefaultRetryInterval   = 5 * time.Second
	DefaultSafetyMargin    = 15 * time.Second
	DefaultMaxClockSkew    = 15 * time.Second
	DefaultSettleDelay     = 2 * time.Second
	// MinSafetyMargin is the smallest SafetyMargin accepted: the work needs
	// time to notice the cancellation and stop writing.
	MinSafetyMargin = 10 * time.Second
	// maxRefreshFailures consecutive failed refreshes lose the lease.
	maxRefreshFailures = 3
	// watchTick bounds how long the watchdog sleeps between wall-clock
	// readings: Go timers do not advance while a laptop sleeps.
	watchTick = time.Second
)

// Options tune a lock. The zero value means the defaults.
type Options struct {
	// Clock tells the time (default clock.Real{}).
	Clock clock.Clock
	// TTL is the lease length written into expires_at (default 1 minute).
	TTL time.Duration
	// RefreshInterval is the time between refreshes (default 30 s).
	RefreshInterval time.Duration
	// RetryInterval is the delay before retrying a failed refresh (default
	// 5 s); three consecutive failures lose the lease.
	RetryInterval time.Duration
	// SafetyMargin: the work is cancelled this long before expires_at when
	// the lease was not refreshed (default 15 s, at least 10 s).
	SafetyMargin time.Duration
	// MaxClockSkew: refuse to lock when our clock and the store's differ by
	// more (default 15 s).
	MaxClockSkew time.Duration
	// SettleDelay: on stores without create-if-absent, the wait between
	// writing the exclusive key and verifying it (default 2 s).
	SettleDelay time.Duration
	// Wait: retry a blocked acquire with jittered backoff for this long
	// (0 = fail at once).
	Wait time.Duration
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
	setDefault(&o.SafetyMargin, DefaultSafetyMargin)
	setDefault(&o.MaxClockSkew, DefaultMaxClockSkew)
	setDefault(&o.SettleDelay, DefaultSettleDelay)
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

// validate checks that a holder refreshes, and retries three times, well
// before the watchdog cancels the work, and that the watchdog cancels it
// before anyone else may see the lease as expired.
func (o Options) validate() error {
	var errs []error
	if o.SafetyMargin < MinSafetyMargin {
		errs = append(errs, fmt.Errorf("safety margin %v is below the minimum %v", o.SafetyMargin, MinSafetyMargin))
	}
	if o.TTL <= o.SafetyMargin {
		errs = append(errs, fmt.Errorf("TTL %v must exceed the safety margin %v", o.TTL, o.SafetyMargin))
	}
	budget := o.RefreshInterval + (maxRefreshFailures-1)*o.RetryInterval
	if o.RefreshInterval <= 0 || o.RetryInterval <= 0 || budget >= o.TTL-o.SafetyMargin {
		errs = append(errs, fmt.Errorf("refresh interval %v plus %d retries of %v must be positive and end before TTL %v minus safety margin %v",
			o.RefreshInterval, maxRefreshFailures-1, o.RetryInterval, o.TTL, o.SafetyMargin))
	}
	if o.MaxClockSkew < 0 || o.SettleDelay < 0 || o.Wait < 0 {
		errs = append(errs, errors.New("negative clock skew, settle delay or wait"))
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
