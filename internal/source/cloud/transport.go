package cloud

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
)

// Defaults of Retry.
const (
	DefaultAttempts = 8
	DefaultBackoff  = time.Second
	// DefaultMaxWait caps one wait, a Retry-After included: a service
	// asking for more is answered with its own error.
	DefaultMaxWait = 2 * time.Minute
)

// Retry is an http.RoundTripper that retries what the drive services ask
// to be retried: 429 Too Many Requests, Drive's 403 rateLimitExceeded and
// userRateLimitExceeded, 500, 502, 503 and 504, and a connection that
// failed before an answer (for requests that can be sent again). It waits
// what Retry-After says, else an exponential backoff with jitter (1 s,
// 2 s, 4 s ... up to MaxWait), and gives up after Attempts. A 401 makes it
// call Refresh (a new access token) and send the request once more.
type Retry struct {
	Base     http.RoundTripper
	Clock    clock.Clock
	Attempts int
	Backoff  time.Duration
	MaxWait  time.Duration
	// Refresh, when set, is called on the first 401 of a request.
	Refresh func()
	// Retried, when set, is told of each retry (for -verbose and tests).
	Retried func(req *http.Request, status int, wait time.Duration)
}

// RoundTrip sends req, again as long as the answer says so.
func (t *Retry) RoundTrip(req *http.Request) (*http.Response, error) {
	attempts, backoff, maxWait := t.Attempts, t.Backoff, t.MaxWait
	if attempts <= 0 {
		attempts = DefaultAttempts
	}
	if backoff <= 0 {
		backoff = DefaultBackoff
	}
	if maxWait <= 0 {
		maxWait = DefaultMaxWait
	}
	c := t.Clock
	if c == nil {
		c = clock.Real{}
	}
	replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	refreshed := false
	for attempt := 1; ; attempt++ {
		r := req
		if attempt > 1 && req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r = req.Clone(req.Context())
			r.Body = body
		}
		resp, err := t.Base.RoundTrip(r)
		status := 0
		var wait time.Duration
		switch {
		case err != nil:
			if req.Context().Err() != nil || !replayable || !retryableNetErr(err) {
				return nil, err
			}
		case resp.StatusCode == http.StatusUnauthorized && !refreshed && t.Refresh != nil && replayable:
			drain(resp)
			t.Refresh()
			refreshed = true
			attempt-- // not the service's fault
			continue
		case retryableStatus(resp):
			status = resp.StatusCode
			wait = retryAfter(resp.Header.Get("Retry-After"), c.Now())
		default:
			return resp, nil
		}
		if attempt >= attempts || wait > maxWait || (!replayable && err == nil) {
			if err != nil {
				return nil, err
			}
			return resp, nil
		}
		if resp != nil {
			drain(resp)
		}
		if wait == 0 {
			d := min(backoff<<(attempt-1), maxWait)
			wait = d/2 + rand.N(d/2+1) //nolint:gosec // jitter, not a secret
		}
		if t.Retried != nil {
			t.Retried(req, status, wait)
		}
		if err := clock.Sleep(req.Context(), c, wait); err != nil {
			return nil, err
		}
	}
}

// retryableNetErr says whether err, a failed round trip, may succeed if
// sent again: a refused, reset or timed-out connection.
func retryableNetErr(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, net.ErrClosed)
}

// retryableStatus says whether resp asks to be tried again. A 403 is
// read (its first 64 KiB, put back for the caller) to tell Drive's rate
// limits from a refused permission.
func retryableStatus(resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	case http.StatusForbidden:
		head, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10)) // a cut body is no rate limit
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
		return isRateLimit(head)
	}
	return false
}

// isRateLimit says whether body, a Google API error, gives a rate-limit
// reason.
func isRateLimit(body []byte) bool {
	var e struct {
		Error struct {
			Errors []struct {
				Reason string `json:"reason"`
			} `json:"errors"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return false
	}
	for _, it := range e.Error.Errors {
		if it.Reason == "rateLimitExceeded" || it.Reason == "userRateLimitExceeded" {
			return true
		}
	}
	return false
}

// retryAfter reads a Retry-After header: seconds or an HTTP date; 0 when
// absent or unreadable.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// drain reads a little of a response that is not used and closes it, so
// that its connection can be reused.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // only to reuse the connection
	_ = resp.Body.Close()                                         // nothing to do about it
}

// Deadlines are the time limits of every request, as the stores have:
// Connect for the connection and TLS handshake, Response for the answer's
// headers and for each read of its body (a stream that stalls longer is
// cut, and resumed by the download).
type Deadlines struct {
	Connect, Response time.Duration
}

// NewTransport returns an HTTP transport with the deadlines d.
func NewTransport(d Deadlines) http.RoundTripper {
	if d.Connect <= 0 {
		d.Connect = 30 * time.Second
	}
	if d.Response <= 0 {
		d.Response = 2 * time.Minute
	}
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.DialContext = (&net.Dialer{Timeout: d.Connect, KeepAlive: 30 * time.Second}).DialContext
	base.TLSHandshakeTimeout = d.Connect
	base.ResponseHeaderTimeout = d.Response
	return &idleDeadline{base: base, idle: d.Response}
}

// idleDeadline cuts a response body that goes idle longer than idle.
type idleDeadline struct {
	base http.RoundTripper
	idle time.Duration
}

func (t *idleDeadline) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	resp, err := t.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	b := &idleBody{ReadCloser: resp.Body, cancel: cancel}
	b.timer = time.AfterFunc(t.idle, cancel)
	b.idle = t.idle
	resp.Body = b
	return resp, nil
}

// idleBody is a body whose every read must come within idle.
type idleBody struct {
	io.ReadCloser
	mu     sync.Mutex
	timer  *time.Timer
	idle   time.Duration
	cancel context.CancelFunc
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.mu.Lock()
	b.timer.Reset(b.idle)
	b.mu.Unlock()
	return n, err
}

func (b *idleBody) Close() error {
	b.mu.Lock()
	b.timer.Stop()
	b.mu.Unlock()
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
