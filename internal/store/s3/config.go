package s3

import (
	"time"

	"github.com/cloudstic/cloudstic/internal/store"
)

// Defaults of Config's retry settings: a request that failed in a way that
// may pass is sent again after nominal waits of 0.5 s, 1 s, 2 s, 4 s and
// 8 s, then every 8 s (MaxRetryWait), each wait drawn at random between
// half the nominal one and the nominal one (jitter, so that hosts that met
// the same outage do not come back in lock-step), as long as the wait ends
// within 30 s of the first attempt: with the nominal waits the retries
// start 0.5, 1.5, 3.5, 7.5, 15.5 and 23.5 s after it (with the shortest
// draws, 0.25, 0.75... and the tenth at 27.75 s), so that a server
// restarting or a network gone for about 20 s does not fail the command
// (the SFTP store's reconnects wait alike).
const (
	// DefaultRetryBackoff is Config.RetryBackoff when zero.
	DefaultRetryBackoff = 500 * time.Millisecond
	// DefaultRetryTimeout is Config.RetryTimeout when zero.
	DefaultRetryTimeout = 30 * time.Second
	// MaxRetryWait caps the doubling nominal wait between two attempts
	// (the wait taken is drawn between half of it and it).
	MaxRetryWait = 8 * time.Second
)

// Config configures Open.
type Config struct {
	// Bucket is the bucket name (required).
	Bucket string
	// Prefix, without leading or trailing slash, under which keys are
	// stored as Prefix + "/" + key. Empty stores keys at the bucket root.
	Prefix string
	// Endpoint is a custom endpoint URL; when set, path-style addressing is used.
	Endpoint string
	// Region defaults to "us-east-1" (FlavorB2: "us-west-004", and the
	// endpoint https://s3.<region>.backblazeb2.com when Endpoint is empty).
	Region string
	// Profile names a shared-config profile.
	Profile string
	// AccessKey and SecretKey are static credentials; when empty, the SDK's
	// default credential chain is used.
	AccessKey, SecretKey string
	// MaxConnections bounds concurrent requests (default 8).
	MaxConnections int
	// ConnectTimeout bounds a TCP connect plus the TLS handshake
	// (default store.DefaultConnectTimeout).
	ConnectTimeout time.Duration
	// ResponseTimeout bounds the wait for response headers once a request
	// has been sent (default store.DefaultResponseTimeout). A request that
	// times out is not retried: the command fails with store.ErrTimeout.
	ResponseTimeout time.Duration
	// RetryTimeout bounds the retries of a request that failed in a way
	// that may pass: a connection refused, reset or closed, a 5xx answer,
	// throttling (the SDK's standard list; never a timeout, see
	// ResponseTimeout, nor an answer such as 403 or 404). No retry starts
	// when its wait would end more than RetryTimeout after the request's
	// first attempt began (default DefaultRetryTimeout); negative: no
	// retries. The request then fails with the last attempt's error.
	// Open's check of the bucket, and the cleanups that run after a
	// failure or that Close waits for, retry for at most 2 s of it
	// (briefRetryTimeout): a wrong endpoint is reported at once, as the
	// SFTP store's first dial is.
	RetryTimeout time.Duration
	// RetryBackoff is the nominal wait before the first retry, doubled
	// before each next one up to MaxRetryWait (default
	// DefaultRetryBackoff). Each wait taken is drawn at random between
	// half the nominal one and the nominal one (see store.Backoff).
	RetryBackoff time.Duration
	// Flavor selects provider-specific behaviour.
	Flavor Flavor
	// ConditionalWrites limits the capabilities declared to fewer than the
	// probe finds (FlavorB2 declares none whatever it says).
	ConditionalWrites ConditionalWrites
	// Logf, when set, receives one line per HTTP request (method, key,
	// status, duration, bytes) and the SDK's own log lines; when nil the
	// SDK logs nothing. It is called from several goroutines at once (the
	// store's requests run concurrently, the probe's among them).
	Logf func(format string, args ...any)
	// Notef, when set, receives the lines that tell how the store rides
	// out a failure, which a user wants to see without a request log:
	// each retry (the error and the wait), a retry given up, a read
	// resumed after a broken connection. Nil: Logf receives them. The
	// retries of the requests that retry for 2 s only (Open's bucket
	// check, cleanups) go to Logf alone: their failure is one error.
	// Called from several goroutines at once, like Logf.
	Notef func(format string, args ...any)
}

// notef returns the receiver of the lines Notef describes: Notef, else
// Logf (nil when neither is set).
func (c Config) notef() func(format string, args ...any) {
	if c.Notef != nil {
		return c.Notef
	}
	return c.Logf
}

// withDefaults fills in the connections, the timeouts and the retry
// settings.
func (c Config) withDefaults() Config {
	if c.MaxConnections <= 0 {
		c.MaxConnections = defaultMaxConnections
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = store.DefaultConnectTimeout
	}
	if c.ResponseTimeout <= 0 {
		c.ResponseTimeout = store.DefaultResponseTimeout
	}
	if c.RetryTimeout == 0 {
		c.RetryTimeout = DefaultRetryTimeout
	}
	if c.RetryBackoff <= 0 {
		c.RetryBackoff = DefaultRetryBackoff
	}
	return c
}
