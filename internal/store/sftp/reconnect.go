package sftp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/sshconn"
	"github.com/cloudstic/cloudstic/internal/store"
)

// dialing is a dial in progress. One goroutine dials, without s.mu; the
// others that need a connection meanwhile wait for done and share the
// outcome, so that an outage brings one series of dials, not one per
// goroutine.
type dialing struct {
	done chan struct{}
	// backoff: the dial retries with backoff (a reconnect after a lost
	// connection), not once.
	backoff bool
	// conn and err are the outcome, set before done is closed.
	conn *sshconn.Conn
	err  error
	// abandoned: the dialler's context ended, so err is its own, not the
	// waiters'.
	abandoned bool
}

// current returns the connection, dialling a new one (once) if a
// reconnect failed earlier or a cancelled operation closed it. A
// connection that broke on its own is found out (and replaced) by the
// operation that uses it.
func (s *Store) current(ctx context.Context) (*sshconn.Conn, error) {
	return s.connect(ctx, nil, false)
}

// reconnect replaces the lost connection old, unless another goroutine
// already did, retrying a dial that fails in a way that may pass (see
// Config.ReconnectRetries).
func (s *Store) reconnect(ctx context.Context, old *sshconn.Conn) (*sshconn.Conn, error) {
	return s.connect(ctx, old, true)
}

// connect returns a usable connection other than old: the store's, the
// outcome of a dial in progress, or one it dials itself (with backoff
// when lostConn). ctx ending while it waits or dials returns ctx's error;
// Close, ErrClosed.
func (s *Store) connect(ctx context.Context, old *sshconn.Conn, lostConn bool) (*sshconn.Conn, error) {
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return nil, ErrClosed
		}
		if c := s.conn; c != nil && c != old && !c.Closed() && !c.TimedOut() {
			s.mu.Unlock()
			return c, nil
		}
		d := s.dialing
		if d == nil {
			return s.dialUnlock(ctx, lostConn)
		}
		s.mu.Unlock()
		select {
		case <-d.done:
		case <-ctx.Done():
			return nil, fmt.Errorf("sftp reconnect: %w", ctx.Err())
		}
		// Another goroutine's outcome: a connection (taken on the next
		// round), or its failure, unless that failure was the dialler's
		// own (its context ended) or a single dial that this reconnect
		// would have retried.
		if d.err != nil && !d.abandoned && (!lostConn || d.backoff || !transient(d.err)) {
			return nil, d.err
		}
	}
}

// dialUnlock, called with s.mu held and no dial in progress, dials a new
// connection without s.mu (see dialing) and makes it the store's.
func (s *Store) dialUnlock(ctx context.Context, lostConn bool) (*sshconn.Conn, error) {
	if s.conn != nil {
		// The connection is broken or closed; its close error says
		// nothing new.
		_ = s.conn.Close()
		s.conn = nil
	}
	if lostConn {
		s.notef("sftp: connection to %s lost; reconnecting", s.cfg.Addr())
	}
	d := &dialing{done: make(chan struct{}), backoff: lostConn}
	s.dialing = d
	s.mu.Unlock()

	dctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.closing, cancel)
	c, err := s.redial(dctx, lostConn)
	stop()
	cancel()

	s.mu.Lock()
	defer s.mu.Unlock()
	s.dialing = nil
	switch {
	case s.closed:
		if c != nil {
			_ = c.Close() // unwanted: nothing was sent on it
		}
		c, err = nil, ErrClosed
	case err != nil:
		d.abandoned = ctx.Err() != nil
		err = fmt.Errorf("sftp reconnect: %w", err)
	default:
		s.conn = c
	}
	d.conn, d.err = c, err
	close(d.done)
	return c, err
}

// redial dials, and with backoff dials again after a failure that may
// pass, waiting about Config.ReconnectBackoff, then twice as long each
// time (jittered: Config.backoff), within Config.ReconnectRetries and
// Config.ReconnectTimeout. Each failed attempt is logged; ctx ending stops
// the waits at once.
func (s *Store) redial(ctx context.Context, backoff bool) (*sshconn.Conn, error) {
	clk := s.cfg.Clock
	start := clk.Mono()
	for n := 1; ; n++ {
		c, err := dial(ctx, s.cfg)
		if err == nil {
			if n > 1 {
				s.notef("sftp: reconnected to %s at attempt %d", s.cfg.Addr(), n)
			}
			return c, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		elapsed := clk.Mono() - start
		wait, ok := s.cfg.backoff().Wait(n, elapsed)
		if !backoff || !ok || !transient(err) {
			if n > 1 {
				return nil, fmt.Errorf("gave up after %d attempts in %v: %w", n, elapsed.Round(time.Millisecond), err)
			}
			return nil, err
		}
		s.notef("sftp: reconnect attempt %d to %s failed: %v; trying again in %v", n, s.cfg.Addr(), err, wait)
		if err := clock.Sleep(ctx, clk, wait); err != nil {
			return nil, err
		}
	}
}

// backoff returns the rule of a reconnect's retries (see store.Backoff):
// waits that double from ReconnectBackoff, each drawn between half of it
// and it, at most ReconnectRetries of them, none ending past
// ReconnectTimeout.
func (c Config) backoff() store.Backoff {
	return store.Backoff{First: c.ReconnectBackoff, Budget: c.ReconnectTimeout, Retries: c.ReconnectRetries, Rand: c.jitter}
}

// transient reports whether the dial error err may pass by itself: the
// connect deadline (store.ErrTimeout), a network error (refused,
// unreachable, a name not resolved) or a connection reset or closed
// during the handshake.
func transient(err error) bool {
	switch {
	case errors.Is(err, store.ErrTimeout):
		return true
	case errors.Is(err, sshconn.ErrAuthFailed), errors.Is(err, sshconn.ErrUnknownHostKey),
		errors.Is(err, sshconn.ErrHostKeyMismatch), errors.Is(err, sshconn.ErrNoCredentials),
		errors.Is(err, sshconn.ErrEncryptedKey), errors.Is(err, sshconn.ErrNoUser),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		// No wait cures these: the server answered and refused the
		// login or showed another host key, the configuration lacks
		// something, or the caller gave up.
		return false
	}
	var ne net.Error
	return errors.As(err, &ne) || sshconn.IsConnLost(err)
}
