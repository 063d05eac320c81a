package sftp

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/fault"
)

// waitClock is a clock.Clock whose After hands each wait of a reconnect's
// backoff to onWait, which returns the channel that ends it; Mono is the
// sum of the waits handed out, so the dials take no time.
type waitClock struct {
	mu     sync.Mutex
	waits  []time.Duration
	onWait func(n int) <-chan time.Time // n: 1 for the first wait
}

func (c *waitClock) Now() time.Time { return time.Now() }

func (c *waitClock) Mono() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	var sum time.Duration
	for _, d := range c.waits {
		sum += d
	}
	return sum
}

func (c *waitClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	c.waits = append(c.waits, d)
	n := len(c.waits)
	c.mu.Unlock()
	return c.onWait(n)
}

// Waits returns the waits handed out so far.
func (c *waitClock) Waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.waits...)
}

// elapsed is a channel on which a wait has already ended.
func elapsed() <-chan time.Time {
	ch := make(chan time.Time, 1)
	ch <- time.Time{}
	return ch
}

// backoffStore opens a store through a new fault.Proxy, timing its
// reconnect waits with a waitClock whose onWait is set by the caller.
func backoffStore(t *testing.T, cfg Config) (*Store, *fault.Proxy, *waitClock) {
	t.Helper()
	cfg, p := proxied(t, cfg)
	clk := &waitClock{onWait: func(int) <-chan time.Time { return elapsed() }}
	cfg.Clock = clk
	return mustOpen(t, cfg), p, clk
}

// outageOp is an operation of TestReconnectOutage: prepare runs before the
// outage (with the context of the operation) and returns the operation,
// which runs during it and checks what it reads.
type outageOp struct {
	name    string
	prepare func(t *testing.T, ctx context.Context, s *Store) func() error
}

// outageOps are a Get, a Put, a stream read on in the middle of the file
// and four Gets at once (which wait for the same reconnect).
func outageOps(data []byte) []outageOp {
	get := func(ctx context.Context, s *Store) error {
		got, err := s.Get(ctx, "k", 1<<30)
		if err == nil && !bytes.Equal(got, data) {
			err = fmt.Errorf("Get returned %d wrong bytes", len(got))
		}
		return err
	}
	put := func(t *testing.T, ctx context.Context, s *Store) {
		t.Helper()
		if _, err := s.Put(ctx, "k", data, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return []outageOp{
		{"Get", func(t *testing.T, ctx context.Context, s *Store) func() error {
			put(t, ctx, s)
			return func() error { return get(ctx, s) }
		}},
		{"Put", func(t *testing.T, ctx context.Context, s *Store) func() error {
			return func() error {
				_, err := s.Put(ctx, "k", data, store.PutOptions{})
				if err == nil {
					err = get(ctx, s)
				}
				return err
			}
		}},
		{"stream", func(t *testing.T, ctx context.Context, s *Store) func() error {
			put(t, ctx, s)
			rc, err := s.OpenRange(ctx, "k", 0, int64(len(data)))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { rc.Close() }) //nolint:errcheck // read-only stream
			head := len(data) / 3
			got := make([]byte, head)
			if _, err := io.ReadFull(rc, got); err != nil {
				t.Fatal(err)
			}
			return func() error {
				rest, err := io.ReadAll(rc)
				if got = append(got, rest...); err == nil && !bytes.Equal(got, data) {
					err = fmt.Errorf("the stream returned %d wrong bytes", len(got))
				}
				return err
			}
		}},
		{"four Gets", func(t *testing.T, ctx context.Context, s *Store) func() error {
			put(t, ctx, s)
			return func() error {
				errs := make([]error, 4)
				var wg sync.WaitGroup
				for i := range errs {
					wg.Go(func() { errs[i] = get(ctx, s) })
				}
				wg.Wait()
				return errors.Join(errs...)
			}
		}},
	}
}

// TestReconnectOutage: the server refuses connections for a while after
// the connection is lost. An operation whose connection is cut waits with
// exponential backoff (nominal waits of 0.5 s, 1 s, 2 s..., each drawn
// between half of it and it) between dials and succeeds when
// the server is back; four at once share one series of dials. If the
// server stays down, the operation fails after the default number of
// retries with an error that wraps the dial's: a connection reset, or
// store.ErrTimeout for dials that were never answered.
func TestReconnectOutage(t *testing.T) {
	data := make([]byte, 3<<20+789)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	reset := func(err error) bool { return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) }
	allWaits := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}
	outages := []struct {
		name      string
		silent    bool // new connections are held unanswered, not reset
		backAfter int  // the wait during which the server is back; 0: never
		ops       []string
		want      func(err error) bool // nil: success
		dials     int64
		waits     []time.Duration
	}{
		{"back after 3.5 s", false, 3, []string{"Get", "Put", "stream", "four Gets"}, nil, 4, allWaits[:3]},
		// Gets that reach the store after the first gave up start a
		// series of their own: the count of dials would vary.
		{"down for good", false, 0, []string{"Get", "Put", "stream"}, reset, 1 + DefaultReconnectRetries, allWaits},
		{"dials time out", true, 0, []string{"Get"}, func(err error) bool { return errors.Is(err, store.ErrTimeout) },
			1 + DefaultReconnectRetries, allWaits},
	}
	for _, o := range outages {
		for _, op := range outageOps(data) {
			if !slices.Contains(o.ops, op.name) {
				continue
			}
			t.Run(o.name+"/"+op.name, func(t *testing.T) {
				ctx := context.Background()
				cfg := testConfig(t)
				cfg.ConnectTimeout = 300 * time.Millisecond
				s, p, clk := backoffStore(t, cfg)
				clk.onWait = func(n int) <-chan time.Time {
					if n == o.backAfter {
						p.Refuse(false)
					}
					return elapsed()
				}
				run := op.prepare(t, ctx, s)
				if o.silent {
					p.Cut()
					p.Freeze()
				} else {
					p.Refuse(true)
					p.Cut()
				}
				before := p.Accepted()
				err := run()
				t.Logf("error: %v", err)
				switch {
				case o.want == nil && err != nil:
					t.Fatalf("%s after the outage: %v", op.name, err)
				case o.want != nil && !o.want(err):
					t.Fatalf("%s with the server down = %v, want the dial's error", op.name, err)
				}
				if n := p.Accepted() - before; n != o.dials {
					t.Errorf("%d dials after the cut, want %d", n, o.dials)
				}
				// Each wait is drawn between half the nominal one
				// and it.
				got := clk.Waits()
				if len(got) != len(o.waits) {
					t.Fatalf("waits %v, want %d within half of and %v", got, len(o.waits), o.waits)
				}
				jittered := false
				for i, nominal := range o.waits {
					if got[i] < nominal/2 || got[i] > nominal {
						t.Errorf("wait %d = %v, want within [%v, %v] (waits %v)", i+1, got[i], nominal/2, nominal, got)
					}
					jittered = jittered || got[i] != nominal
				}
				if !jittered {
					t.Errorf("waits %v: each the nominal one, no jitter", got)
				}
			})
		}
	}
}

// TestReconnectStops: a reconnect's backoff ends at once, with the
// context's error, when the operation's context is cancelled, and with
// ErrClosed when the store is closed; a dial that the server refused to
// log in is not retried.
func TestReconnectStops(t *testing.T) {
	cases := []struct {
		name  string
		key   bool // the key file is replaced by an unknown key before the cut
		wait  func(s *Store, cancel context.CancelFunc, closed chan<- error) <-chan time.Time
		want  error
		dials int64
		waits int
	}{
		{"cancelled", false, func(s *Store, cancel context.CancelFunc, _ chan<- error) <-chan time.Time {
			cancel()
			return nil
		}, context.Canceled, 1, 1},
		{"closed", false, func(s *Store, _ context.CancelFunc, closed chan<- error) <-chan time.Time {
			go func() { closed <- s.Close() }()
			return nil
		}, ErrClosed, 1, 1},
		{"login refused", true, nil, ErrAuthFailed, 1, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig(t)
			key, err := os.ReadFile(cfg.KeyFile)
			if err != nil {
				t.Fatal(err)
			}
			cfg.KeyFile = filepath.Join(t.TempDir(), "key")
			if err := os.WriteFile(cfg.KeyFile, key, 0o600); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s, p, clk := backoffStore(t, cfg)
			closed := make(chan error, 1)
			clk.onWait = func(int) <-chan time.Time { return c.wait(s, cancel, closed) }
			if _, err := s.Put(ctx, "k", []byte("v"), store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			if c.key {
				other, err := os.ReadFile(writeKey(t))
				if err == nil {
					err = os.WriteFile(cfg.KeyFile, other, 0o600)
				}
				if err != nil {
					t.Fatal(err)
				}
			} else {
				p.Refuse(true)
			}
			p.Cut()
			before := p.Accepted()
			done := make(chan error, 1)
			go func() { _, err := s.Get(ctx, "k", 1<<30); done <- err }()
			select {
			case err = <-done:
			case <-time.After(time.Minute):
				t.Fatal("Get still waiting a minute after the fault")
			}
			t.Logf("error: %v", err)
			if !errors.Is(err, c.want) {
				t.Fatalf("Get = %v, want %v", err, c.want)
			}
			if n := p.Accepted() - before; n != c.dials {
				t.Errorf("%d dials after the cut, want %d", n, c.dials)
			}
			if n := len(clk.Waits()); n != c.waits {
				t.Errorf("%d waits, want %d", n, c.waits)
			}
			if c.want == ErrClosed {
				if err := <-closed; err != nil {
					t.Errorf("Close during the backoff: %v", err)
				}
			}
		})
	}
}
