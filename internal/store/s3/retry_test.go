package s3

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestRetryBackoff: the nominal waits double from RetryBackoff up to
// MaxRetryWait (a Rand of 1 draws them exactly), and the SDK's count of
// attempts never ends the retries before the time budget does, even when
// every wait is drawn at its shortest.
func TestRetryBackoff(t *testing.T) {
	s := time.Second
	cases := []struct {
		name        string
		cfg         Config
		waits       []time.Duration
		maxAttempts int
	}{
		{"defaults", Config{},
			[]time.Duration{500 * time.Millisecond, s, 2 * s, 4 * s, 8 * s, 8 * s, 8 * s},
			// Retries 0.5, 1.5, 3.5, 7.5, 15.5 and 23.5 s after the
			// start with the nominal waits; with the shortest (half
			// as long), 0.25, 0.75... and 27.75 s, the tenth.
			12},
		{"no retries", Config{RetryTimeout: -1}, nil, 2},
		{"wait past the budget", Config{RetryBackoff: time.Minute, RetryTimeout: s}, nil, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := retryBackoff(c.cfg.withDefaults())
			b.Rand = func() float64 { return 1 }
			for i, want := range c.waits {
				if got, ok := b.Wait(i+1, 0); got != want || !ok {
					t.Errorf("Wait(%d, 0) = %v, %v; want %v", i+1, got, ok, want)
				}
			}
			if len(c.waits) == 0 {
				if got, ok := b.Wait(1, 0); ok {
					t.Errorf("Wait(1, 0) = %v, a retry; want none", got)
				}
			}
			if got := maxAttempts(b); got != c.maxAttempts {
				t.Errorf("maxAttempts = %d, want %d", got, c.maxAttempts)
			}
		})
	}
}

// retryingIn matches a retry's log line and its wait.
var retryingIn = regexp.MustCompile(`attempt (\d+) failed: .*; retrying in (\S+)$`)

// loggedWaits returns the waits of log's retry lines, in order.
func loggedWaits(t *testing.T, log *retryLog) []time.Duration {
	t.Helper()
	log.mu.Lock()
	defer log.mu.Unlock()
	var waits []time.Duration
	for _, line := range log.lines {
		if m := retryingIn.FindStringSubmatch(line); m != nil {
			d, err := time.ParseDuration(m[2])
			if err != nil {
				t.Fatalf("retry line %q: %v", line, err)
			}
			waits = append(waits, d)
		}
	}
	return waits
}

// delayRecorder is an SDK retryer that records the waits its RetryDelay
// returns: those the SDK's retry loop sleeps.
type delayRecorder struct {
	aws.RetryerV2
	mu     sync.Mutex
	delays []time.Duration
}

func (r *delayRecorder) RetryDelay(attempt int, opErr error) (time.Duration, error) {
	d, err := r.RetryerV2.RetryDelay(attempt, opErr)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.delays = append(r.delays, d)
	return d, err
}

// Delays returns the waits recorded.
func (r *delayRecorder) Delays() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Duration(nil), r.delays...)
}

// record is a client option that puts r around the client's retryer.
func (r *delayRecorder) record(t *testing.T) func(*s3.Options) {
	return func(o *s3.Options) {
		v2, ok := o.Retryer.(aws.RetryerV2)
		if !ok {
			t.Fatalf("the client's retryer %T is not a RetryerV2", o.Retryer)
		}
		r.RetryerV2 = v2
		o.Retryer = r
	}
}

// TestRetryDelayLogged: the wait the SDK's retry loop takes before each
// retry (RetryDelay) is the one logged when the retry was granted, drawn
// within [nominal/2, nominal], and jittered: not every wait is the nominal
// one.
func TestRetryDelayLogged(t *testing.T) {
	eachServer(t, func(t *testing.T, e testEnv) {
		rec := &delayRecorder{}
		s, p, log := openThrough(t, e, func(c *Config) { c.RetryTimeout = 3 * time.Second }, rec.record(t))
		ctx := context.Background()
		<-s.probeDone // only the test's requests from now on
		p.Refuse(true)
		p.Cut()
		jittered := 0
		for i := range 2 {
			before := len(rec.Delays())
			if _, err := s.Get(ctx, "k", 1<<20); err == nil {
				t.Fatalf("Get %d with the server down succeeded", i)
			}
			logged, delays := loggedWaits(t, log), rec.Delays()
			t.Logf("Get %d: waits %v", i, delays[before:])
			if len(delays) == before {
				t.Fatalf("Get %d: no retry:\n%s", i, log)
			}
			if fmt.Sprint(delays) != fmt.Sprint(logged) {
				t.Fatalf("RetryDelay returned %v, the log says %v:\n%s", delays, logged, log)
			}
			for n, d := range delays[before:] {
				nominal := s.retry.Nominal(n + 1)
				if d < nominal/2 || d > nominal {
					t.Errorf("Get %d: wait %d = %v, outside [%v, %v]", i, n+1, d, nominal/2, nominal)
				}
				if d != nominal {
					jittered++
				}
			}
		}
		if jittered == 0 {
			t.Errorf("every wait was the nominal one: no jitter:\n%s", log)
		}
	})
}

// TestRetryDelayDrawnOnce: RetryDelay returns the wait that GetRetryToken
// drew and logged for the same attempt's error, without drawing anew;
// an error that no request's retryState owns gets a wait of its own.
func TestRetryDelayDrawnOnce(t *testing.T) {
	draws := 0
	b := retryBackoff(Config{}.withDefaults())
	b.Rand = func() float64 { draws++; return float64(draws%4) / 4 }
	var logged []string
	r := newRetryer(b, func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) })
	rs := &retryState{start: time.Now(), backoff: b}
	ctx := context.WithValue(context.Background(), retryStateKey{}, rs)
	for n := 1; n <= 4; n++ {
		t.Run(fmt.Sprint("retry ", n), func(t *testing.T) {
			err := &attemptError{err: errors.New("connection refused"), rs: rs}
			if _, terr := r.GetRetryToken(ctx, err); terr != nil {
				t.Fatalf("GetRetryToken: %v", terr)
			}
			got, derr := r.RetryDelay(n, err)
			if derr != nil {
				t.Fatalf("RetryDelay: %v", derr)
			}
			m := retryingIn.FindStringSubmatch(logged[len(logged)-1])
			if m == nil || m[1] != fmt.Sprint(n) || m[2] != got.String() {
				t.Fatalf("RetryDelay(%d) = %v, logged %q", n, got, logged[len(logged)-1])
			}
			if draws != n {
				t.Fatalf("%d draws after %d retries", draws, n)
			}
		})
	}
	t.Run("no retryState", func(t *testing.T) {
		got, err := r.RetryDelay(1, errors.New("connection refused"))
		if err != nil || got < b.Nominal(1)/2 || got > b.Nominal(1) {
			t.Fatalf("RetryDelay(1) = %v, %v; want within [%v, %v]", got, err, b.Nominal(1)/2, b.Nominal(1))
		}
	})
}
