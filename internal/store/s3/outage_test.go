package s3

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/fault"
)

// retryLog is a Config.Logf that keeps the lines and tells when the first
// retry was logged.
type retryLog struct {
	mu      sync.Mutex
	lines   []string
	retries int
	once    sync.Once
	retried chan struct{} // closed at the first retry
}

func newRetryLog() *retryLog { return &retryLog{retried: make(chan struct{})} }

func (l *retryLog) logf(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, line)
	if strings.Contains(line, "; retrying in ") {
		l.retries++
		l.once.Do(func() { close(l.retried) })
	}
}

// count returns the number of retries logged.
func (l *retryLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.retries
}

// String returns the lines logged.
func (l *retryLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// newProxy returns a fault.Proxy to e's server, closed at the end of the
// test, and the endpoint that goes through it.
func newProxy(t *testing.T, e testEnv) (*fault.Proxy, string) {
	t.Helper()
	u, err := url.Parse(e.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	p, err := fault.NewProxy(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() }) //nolint:errcheck // test teardown
	return p, u.Scheme + "://" + p.Addr()
}

// openThrough opens a store on a fresh prefix of e's server through a new
// proxy p (see newProxy), with quick retries (changed by modify) and a
// retryLog. The prefix is emptied at the end of the test directly on the
// server.
func openThrough(t *testing.T, e testEnv, modify func(*Config), extra ...func(*s3.Options)) (*Store, *fault.Proxy, *retryLog) {
	t.Helper()
	p, endpoint := newProxy(t, e)
	s, log := openVia(t, e, p, endpoint, modify, extra...)
	return s, p, log
}

// openVia is openThrough with the proxy given.
func openVia(t *testing.T, e testEnv, p *fault.Proxy, endpoint string, modify func(*Config), extra ...func(*s3.Options)) (*Store, *retryLog) {
	t.Helper()
	direct := e.config(t, FlavorS3)
	t.Cleanup(func() { cleanPrefix(t, direct) })
	log := newRetryLog()
	cfg := direct
	cfg.Endpoint = endpoint
	cfg.Logf = log.logf
	cfg.RetryBackoff, cfg.RetryTimeout = 100*time.Millisecond, 10*time.Second
	if modify != nil {
		modify(&cfg)
	}
	s, err := open(context.Background(), cfg, extra...)
	if err != nil {
		t.Fatalf("Open through the proxy: %v", err)
	}
	t.Cleanup(func() {
		p.Refuse(false)
		s.Close() //nolint:errcheck // only drops idle connections
	})
	return s, log
}

// outageOps are the requests that must ride out an outage: each runs
// on a store that holds "k" = "v".
var outageOps = []struct {
	name string
	run  func(ctx context.Context, s *Store) error
}{
	{"Get", func(ctx context.Context, s *Store) error {
		got, err := s.Get(ctx, "k", 1<<20)
		if err == nil && string(got) != "v" {
			return fmt.Errorf("Get = %q, want %q", got, "v")
		}
		return err
	}},
	{"Put", func(ctx context.Context, s *Store) error {
		_, err := s.Put(ctx, "k", []byte("v2"), store.PutOptions{})
		return err
	}},
	{"PutIfAbsent", func(ctx context.Context, s *Store) error {
		_, err := s.Put(ctx, "new", []byte("v"), store.PutOptions{IfAbsent: true})
		return err
	}},
	{"List", func(ctx context.Context, s *Store) error {
		n := 0
		err := s.List(ctx, "", func(store.ObjectInfo) error { n++; return nil })
		if err == nil && n != 1 {
			return fmt.Errorf("List found %d keys, want 1", n)
		}
		return err
	}},
}

// TestOutage: while the server is unreachable (every new connection is
// reset, the open ones are cut), a request is retried with growing waits:
// one that outlasts an outage of 3 s succeeds, with its retries logged;
// one that outlasts its RetryTimeout (2 s) fails with the network error;
// one whose context is cancelled in a wait returns at once with
// context.Canceled.
func TestOutage(t *testing.T) {
	const outage = 3 * time.Second
	cases := []struct {
		name   string
		modify func(*Config)
		// outage: the server comes back after it; 0: never.
		outage time.Duration
		// cancel: cancel the request's context at its first retry.
		cancel bool
		check  func(t *testing.T, err error, took time.Duration, log *retryLog)
	}{
		{"back after 3s", nil, outage, false, func(t *testing.T, err error, took time.Duration, log *retryLog) {
			if err != nil {
				t.Fatalf("request through a %v outage: %v", outage, err)
			}
			if took < outage {
				t.Errorf("request took %v, less than the outage", took)
			}
			if log.count() == 0 {
				t.Errorf("no retry logged:\n%s", log)
			}
		}},
		{"down for good", func(c *Config) { c.RetryTimeout = 2 * time.Second }, 0, false,
			func(t *testing.T, err error, took time.Duration, log *retryLog) {
				var ne net.Error
				if !errors.As(err, &ne) || errors.Is(err, store.ErrTimeout) || errors.Is(err, context.Canceled) {
					t.Fatalf("error %v, want the network error", err)
				}
				// Nominal waits of 0.1, 0.2, 0.4, 0.8 and 1.6 s, each
				// drawn between half of it and it: four end within
				// 0.75 to 1.5 s, the fifth within the 2 s only when
				// the draws were short.
				if took < 750*time.Millisecond || took > 5*time.Second {
					t.Errorf("request failed after %v, want 0.75 to about 2 s", took)
				}
				// (3 if the attempts were slow.)
				if n := log.count(); n < 3 || n > 5 {
					t.Errorf("%d retries logged, want 4 or 5:\n%s", n, log)
				}
			}},
		{"cancelled in a wait", func(c *Config) { c.RetryBackoff = time.Minute; c.RetryTimeout = 0 }, 0, true,
			func(t *testing.T, err error, took time.Duration, log *retryLog) {
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("error %v, want context.Canceled", err)
				}
				if took > 5*time.Second {
					t.Errorf("cancelled request returned after %v", took)
				}
			}},
	}
	eachServer(t, func(t *testing.T, e testEnv) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				// The requests run at once, each on a store and proxy
				// of its own: the test takes one outage's time.
				runs := make([]*outageRun, len(outageOps))
				for i := range outageOps {
					runs[i] = startOutage(t, e, c.modify, c.outage, outageOps[i].run)
				}
				for i, op := range outageOps {
					t.Run(op.name, func(t *testing.T) {
						r := runs[i]
						if c.cancel {
							select {
							case <-r.log.retried:
							case res := <-r.done:
								t.Fatalf("request ended before a retry: %v", res.err)
							case <-time.After(time.Minute):
								t.Fatal("no retry in a minute")
							}
							r.start = time.Now()
							r.cancel()
						}
						res := <-r.done
						c.check(t, res.err, res.end.Sub(r.start), r.log)
					})
				}
			})
		}
	})
}

// outageRun is a request sent while its server is unreachable.
type outageRun struct {
	log    *retryLog
	start  time.Time
	cancel context.CancelFunc
	done   chan outageResult
}

// outageResult is how an outageRun's request ended.
type outageResult struct {
	err error
	end time.Time
}

// startOutage opens a store through a proxy (openThrough, with modify),
// puts "k" = "v", makes the server unreachable for outage (0: for good)
// and starts run.
func startOutage(t *testing.T, e testEnv, modify func(*Config), outage time.Duration,
	run func(context.Context, *Store) error) *outageRun {
	t.Helper()
	s, p, log := openThrough(t, e, modify)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if _, err := s.Put(ctx, "k", []byte("v"), store.PutOptions{}); err != nil {
		t.Fatalf("Put before the outage: %v", err)
	}
	<-s.probeDone // only the test's requests from now on
	r := &outageRun{log: log, start: time.Now(), cancel: cancel, done: make(chan outageResult, 1)}
	p.Refuse(true)
	p.Cut()
	if outage > 0 {
		timer := time.AfterFunc(outage, func() { p.Refuse(false) })
		t.Cleanup(func() { timer.Stop() })
	}
	go func() {
		err := run(ctx, s)
		r.done <- outageResult{err, time.Now()}
	}()
	return r
}

// TestBriefRetries: Open's bucket check, and the deletion of the probe's
// keys that Close waits for, retry for at most briefRetryTimeout (2 s),
// not the default RetryTimeout (30 s): a wrong endpoint is reported at
// once, and Close during an outage does not wait it out, nor for the
// probe's retry in progress.
func TestBriefRetries(t *testing.T) {
	cases := []struct {
		name string
		// run returns how long the step that must end within about
		// briefRetryTimeout took, the store's log, and the step's error.
		run func(t *testing.T, e testEnv) (time.Duration, *retryLog, error)
	}{
		{"Open's bucket check", func(t *testing.T, e testEnv) (time.Duration, *retryLog, error) {
			p, endpoint := newProxy(t, e)
			p.Refuse(true)
			log, notes := newRetryLog(), newRetryLog()
			cfg := e.config(t, FlavorS3)
			cfg.Endpoint, cfg.Logf, cfg.Notef = endpoint, log.logf, notes.logf
			cfg.RetryBackoff = 100 * time.Millisecond
			start := time.Now()
			s, err := Open(context.Background(), cfg)
			if err == nil {
				s.Close() //nolint:errcheck // only drops idle connections
				t.Fatal("Open through a refusing proxy succeeded")
			}
			var ne net.Error
			if !errors.As(err, &ne) {
				t.Errorf("Open: %v, want the network error", err)
			}
			// A wrong endpoint is one error line: the brief retries
			// are in the request log only, not in Notef's lines.
			if n := notes.count(); n != 0 {
				t.Errorf("%d brief retries noted, want them in the request log only:\n%s", n, notes)
			}
			return time.Since(start), log, err
		}},
		{"Close in the probe's retries", func(t *testing.T, e testEnv) (time.Duration, *retryLog, error) {
			// The probe's second round (its fourth PutObject on) meets
			// the outage; its first round created the keys that Close
			// then waits for the probe to delete.
			p, endpoint := newProxy(t, e)
			var puts atomic.Int32
			outage := func(context.Context) error {
				if puts.Add(1) == 4 {
					p.Refuse(true)
					p.Cut()
				}
				return nil
			}
			s, log := openVia(t, e, p, endpoint, func(c *Config) { c.RetryTimeout = 0 }, waitBeforeSend("PutObject", outage))
			select {
			case <-log.retried:
			case <-s.probeDone:
				t.Fatalf("the probe ended before a retry:\n%s", log)
			case <-time.After(time.Minute):
				t.Fatal("no retry in a minute")
			}
			start := time.Now()
			err := s.Close()
			return time.Since(start), log, err
		}},
	}
	eachServer(t, func(t *testing.T, e testEnv) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				took, log, err := c.run(t, e)
				t.Logf("took %v: %v", took, err)
				if took > 2*briefRetryTimeout {
					t.Errorf("took %v, want about %v at most", took, briefRetryTimeout)
				}
				if log.count() == 0 {
					t.Errorf("no retry logged:\n%s", log)
				}
			})
		}
	})
}
