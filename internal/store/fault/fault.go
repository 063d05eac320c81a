package fault

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cloudstic/cloudstic/internal/store"
)

// ErrInjected is wrapped by every error this wrapper makes up.
var ErrInjected = errors.New("injected store fault")

// defaultLatency is the longest injected wait when Config.Latency is zero.
const defaultLatency = 10 * time.Millisecond

// Store wraps an inner store and injects the faults of its Config.
type Store struct {
	inner store.Store
	cfg   Config
	mu    sync.Mutex // guards rng
	rng   *rand.Rand
	muts  atomic.Int64   // mutating operations started
	dups  sync.WaitGroup // duplicates not yet sent
	fired struct {
		errors, ackLosses, latencies, shortReads, duplicates atomic.Int64
	}
}

// Fired counts the faults a Store injected, by kind.
type Fired struct {
	Errors     int64 `json:"errors"`
	AckLosses  int64 `json:"ack_losses"`
	Latencies  int64 `json:"latencies"`
	ShortReads int64 `json:"short_reads"`
	Duplicates int64 `json:"duplicates"`
}

// Add returns the sum of f and g.
func (f Fired) Add(g Fired) Fired {
	return Fired{Errors: f.Errors + g.Errors, AckLosses: f.AckLosses + g.AckLosses,
		Latencies: f.Latencies + g.Latencies, ShortReads: f.ShortReads + g.ShortReads,
		Duplicates: f.Duplicates + g.Duplicates}
}

var (
	_ store.Store       = (*Store)(nil)
	_ store.RangeReader = (*Store)(nil)
	_ store.RangeOpener = (*Store)(nil)
)

// New wraps inner.
func New(inner store.Store, cfg Config) *Store {
	if cfg.Latency <= 0 {
		cfg.Latency = defaultLatency
	}
	seed := uint64(cfg.Seed)
	return &Store{inner: inner, cfg: cfg, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// Describe names the inner store.
func (s *Store) Describe() string { return store.Describe(s.inner) }

// RequestCost is the inner store's.
func (s *Store) RequestCost() int64 { return store.RequestCost(s.inner) }

// Mutations returns how many Puts and Deletes were started so far.
func (s *Store) Mutations() int64 { return s.muts.Load() }

// Fired returns how many faults of each kind were injected so far, so that
// a test can tell that its faults happened.
func (s *Store) Fired() Fired {
	return Fired{Errors: s.fired.errors.Load(), AckLosses: s.fired.ackLosses.Load(),
		Latencies: s.fired.latencies.Load(), ShortReads: s.fired.shortReads.Load(),
		Duplicates: s.fired.duplicates.Load()}
}

// roll reports whether an event of probability p happens; frac is a
// second uniform number in [0,1) for sizing the fault.
func (s *Store) roll(p float64) (hit bool, frac float64) {
	if p <= 0 {
		return false, 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rng.Float64() < p, s.rng.Float64()
}

// before injects latency and, at ErrorRate, an error before op reaches
// the inner store.
func (s *Store) before(ctx context.Context, op, key string) error {
	if hit, frac := s.roll(s.cfg.LatencyRate); hit {
		s.fired.latencies.Add(1)
		t := time.NewTimer(time.Duration(frac * float64(s.cfg.Latency)))
		defer t.Stop()
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-t.C:
		}
	}
	if hit, _ := s.roll(s.cfg.ErrorRate); hit {
		s.fired.errors.Add(1)
		return fmt.Errorf("%s %s: %w", op, key, ErrInjected)
	}
	return nil
}

// kill stops the process (or calls Config.Kill) and, should that return,
// reports the operation as failed.
func (s *Store) kill(op, key string) error {
	if s.cfg.Kill != nil {
		s.cfg.Kill()
	} else if p, err := os.FindProcess(os.Getpid()); err == nil {
		if err := p.Signal(os.Kill); err == nil {
			select {} // the signal ends the process before anything else is written
		}
	}
	return fmt.Errorf("%s %s: killed: %w", op, key, ErrInjected)
}

// mutate runs a Put or Delete with the kill point and injected faults.
func (s *Store) mutate(ctx context.Context, op, key string, do func() error) error {
	n := s.muts.Add(1)
	killHere := s.cfg.KillAt > 0 && n == int64(s.cfg.KillAt)
	if killHere && !s.cfg.KillMidPut {
		return s.kill(op, key)
	}
	if err := s.before(ctx, op, key); err != nil {
		if killHere {
			return s.kill(op, key)
		}
		return err
	}
	err := do()
	if killHere {
		return s.kill(op, key)
	}
	return err
}

// shorten returns a strict prefix of b with an error, at ShortReadRate.
func (s *Store) shorten(op, key string, b []byte, err error) ([]byte, error) {
	if err != nil || len(b) == 0 {
		return b, err
	}
	if hit, frac := s.roll(s.cfg.ShortReadRate); hit {
		n := int(frac * float64(len(b))) // < len(b)
		s.fired.shortReads.Add(1)
		return b[:n], fmt.Errorf("%s %s: got %d of %d bytes: %w (%w)", op, key, n, len(b), ErrInjected, io.ErrUnexpectedEOF)
	}
	return b, nil
}

// Capabilities passes the inner store's through.
func (s *Store) Capabilities() store.Capabilities { return s.inner.Capabilities() }

// Get forwards, with faults.
func (s *Store) Get(ctx context.Context, key string, max int64) ([]byte, error) {
	if err := s.before(ctx, "get", key); err != nil {
		return nil, err
	}
	b, err := s.inner.Get(ctx, key, max)
	return s.shorten("get", key, b, err)
}

// GetRange forwards, with faults.
func (s *Store) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	if err := s.before(ctx, "get range", key); err != nil {
		return nil, err
	}
	b, err := s.inner.GetRange(ctx, key, off, n)
	return s.shorten("get range", key, b, err)
}

// ReadRange forwards, with faults: at ShortReadRate it fails after reading
// a strict prefix (the rest of buf is zeroed), as GetRange returns one.
func (s *Store) ReadRange(ctx context.Context, key string, off int64, buf []byte) error {
	if err := s.before(ctx, "get range", key); err != nil {
		return err
	}
	err := store.ReadRangeInto(ctx, s.inner, key, off, buf)
	short, err := s.shorten("get range", key, buf, err)
	if err != nil {
		clear(buf[len(short):])
	}
	return err
}

// OpenRange forwards (store.OpenRange on the inner store), with ReadRange's
// faults: latency and an injected error at the opening, and at
// ShortReadRate a stream that fails after a strict prefix of the range.
func (s *Store) OpenRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	if err := s.before(ctx, "get range", key); err != nil {
		return nil, err
	}
	rc, err := store.OpenRange(ctx, s.inner, key, off, n)
	if err != nil || n == 0 {
		return rc, err
	}
	if hit, frac := s.roll(s.cfg.ShortReadRate); hit {
		s.fired.shortReads.Add(1)
		return &shortStream{rc: rc, key: key, left: int64(frac * float64(n)), n: n}, nil
	}
	return rc, nil
}

// shortStream passes left bytes of a stream of n, then fails.
type shortStream struct {
	rc      io.ReadCloser
	key     string
	left, n int64
}

func (s *shortStream) Read(p []byte) (int, error) {
	if s.left <= 0 {
		return 0, fmt.Errorf("get range %s: stream of %d bytes cut short: %w (%w)", s.key, s.n, ErrInjected, io.ErrUnexpectedEOF)
	}
	if int64(len(p)) > s.left {
		p = p[:s.left]
	}
	m, err := s.rc.Read(p)
	s.left -= int64(m)
	return m, err
}

func (s *shortStream) Close() error { return s.rc.Close() }

// Put forwards, with faults and the kill point; at AckLossRate a
// successful write is reported as failed.
func (s *Store) Put(ctx context.Context, key string, data []byte, opts store.PutOptions) (store.ObjectInfo, error) {
	var info store.ObjectInfo
	err := s.mutate(ctx, "put", key, func() error {
		var err error
		info, err = s.inner.Put(ctx, key, data, opts)
		if err == nil {
			data := append([]byte(nil), data...) // the caller may reuse its buffer
			s.duplicate(func() { _, _ = s.inner.Put(context.Background(), key, data, opts) })
		}
		if hit, _ := s.roll(s.cfg.AckLossRate); err == nil && hit {
			s.fired.ackLosses.Add(1)
			return fmt.Errorf("put %s: reply lost: %w", key, ErrInjected)
		}
		return err
	})
	if err != nil {
		return store.ObjectInfo{}, err
	}
	return info, nil
}

// Delete forwards, with faults and the kill point.
func (s *Store) Delete(ctx context.Context, key string) error {
	return s.mutate(ctx, "delete", key, func() error {
		err := s.inner.Delete(ctx, key)
		if err == nil {
			s.duplicate(func() { _ = s.inner.Delete(context.Background(), key) })
		}
		return err
	})
}

// duplicate sends a request again later, at DupRate: a late retransmission
// whose outcome nobody reads (hence the ignored errors above).
func (s *Store) duplicate(send func()) {
	hit, frac := s.roll(s.cfg.DupRate)
	if !hit {
		return
	}
	s.fired.duplicates.Add(1)
	s.dups.Add(1)
	time.AfterFunc(time.Duration((1+frac)/2*float64(s.cfg.Latency)), func() {
		defer s.dups.Done()
		send()
	})
}

// Stat forwards, with faults.
func (s *Store) Stat(ctx context.Context, key string) (store.ObjectInfo, error) {
	if err := s.before(ctx, "stat", key); err != nil {
		return store.ObjectInfo{}, err
	}
	return s.inner.Stat(ctx, key)
}

// List forwards, with faults (an injected error comes before any object).
func (s *Store) List(ctx context.Context, prefix string, fn func(store.ObjectInfo) error) error {
	if err := s.before(ctx, "list", prefix); err != nil {
		return err
	}
	return s.inner.List(ctx, prefix, fn)
}

// Close waits for pending duplicates, then closes the inner store.
func (s *Store) Close() error {
	s.dups.Wait()
	return s.inner.Close()
}

// Now forwards, with faults.
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	if err := s.before(ctx, "now", ""); err != nil {
		return time.Time{}, err
	}
	return s.inner.Now(ctx)
}
