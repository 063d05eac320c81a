package sftp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/store"
)

// TestRetryWait: the nominal waits double from ReconnectBackoff (a jitter
// of 1 draws them exactly, 0 half as long), stop after ReconnectRetries,
// and none drawn ends past ReconnectTimeout (dials that time out use the
// time up sooner).
func TestRetryWait(t *testing.T) {
	def := Config{}.withDefaults()
	ms := time.Millisecond
	cases := []struct {
		name    string
		cfg     Config
		n       int
		elapsed time.Duration
		jitter  float64
		want    time.Duration // 0: no retry
	}{
		{"first", def, 1, 0, 1, 500 * ms},
		{"first, shortest", def, 1, 0, 0, 250 * ms},
		{"second", def, 2, 500 * ms, 1, time.Second},
		{"fifth", def, 5, 7500 * ms, 1, 8 * time.Second},
		{"fifth, shortest", def, 5, 7500 * ms, 0, 4 * time.Second},
		{"past the retries", def, 6, 15500 * ms, 0, 0},
		{"dials timed out", def, 3, 21 * time.Second, 1, 2 * time.Second},
		{"past the timeout", def, 3, 29 * time.Second, 1, 0},
		{"short draw within the timeout", def, 3, 29 * time.Second, 0, time.Second},
		{"no retries", Config{ReconnectRetries: -1}.withDefaults(), 1, 0, 0, 0},
		{"many retries", Config{ReconnectRetries: 100}.withDefaults(), 90, 0, 0, 0},
		{"custom", Config{ReconnectRetries: 3, ReconnectBackoff: 100 * ms, ReconnectTimeout: time.Second}.withDefaults(), 3, 500 * ms, 1, 400 * ms},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg
			cfg.jitter = func() float64 { return c.jitter }
			got, ok := cfg.backoff().Wait(c.n, c.elapsed)
			if !ok {
				got = 0
			}
			if got != c.want {
				t.Fatalf("Wait(%d, %v) = %v, %v; want %v", c.n, c.elapsed, got, ok, c.want)
			}
		})
	}
}

// TestTransient: the dial errors retried are those of the network and the
// connect deadline, never a refused login or host key, nor a context's.
func TestTransient(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"refused", fmt.Errorf("connect to h:22: %w", refused), true},
		{"unreachable", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ENETUNREACH}, true},
		{"no such host", &net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "h", IsNotFound: true}}, true},
		{"reset in the handshake", fmt.Errorf("connect to h:22: ssh: handshake failed: %w", &net.OpError{Op: "read", Err: syscall.ECONNRESET}), true},
		{"closed in the handshake", fmt.Errorf("connect to h:22: ssh: handshake failed: %w", io.EOF), true},
		{"connect timeout", fmt.Errorf("%w: connect to h:22: %w", store.ErrTimeout, context.DeadlineExceeded), true},
		{"login refused", fmt.Errorf("log in: %w: credentials rejected", ErrAuthFailed), false},
		{"host key changed", fmt.Errorf("connect: %w", ErrHostKeyMismatch), false},
		{"unknown host key", ErrUnknownHostKey, false},
		{"key file gone", &fs.PathError{Op: "open", Path: "k", Err: fs.ErrNotExist}, false},
		{"cancelled", fmt.Errorf("connect to h:22: %w", context.Canceled), false},
		{"other", errors.New("ssh: no common algorithm"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := transient(c.err); got != c.want {
				t.Fatalf("transient(%v) = %v, want %v", c.err, got, c.want)
			}
		})
	}
}
