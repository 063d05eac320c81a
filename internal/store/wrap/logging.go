package wrap

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cloudstic/cloudstic/internal/store"
)

// Counts are request totals of a Logging store.
type Counts struct {
	Requests, BytesUp, BytesDown int64
}

// Logging logs every request with its duration and counts requests and
// bytes. Logf may be nil to count only.
type Logging struct {
	inner store.Store
	logf  func(format string, args ...any)
	reqs  atomic.Int64
	up    atomic.Int64
	down  atomic.Int64
}

// NewLogging wraps inner.
func NewLogging(inner store.Store, logf func(format string, args ...any)) *Logging {
	return &Logging{inner: inner, logf: logf}
}

var (
	_ store.Store            = (*Logging)(nil)
	_ store.RangeReader      = (*Logging)(nil)
	_ store.IfPresentDeleter = (*Logging)(nil)
	_ store.RangeOpener      = (*Logging)(nil)
)

// Counts returns the totals so far.
func (l *Logging) Counts() Counts {
	return Counts{Requests: l.reqs.Load(), BytesUp: l.up.Load(), BytesDown: l.down.Load()}
}

// Describe names the inner store.
func (l *Logging) Describe() string { return store.Describe(l.inner) }

// RequestCost is the inner store's.
func (l *Logging) RequestCost() int64 { return store.RequestCost(l.inner) }

func (l *Logging) log(op, key string, start time.Time, n int64, err error) {
	l.reqs.Add(1)
	if l.logf == nil {
		return
	}
	status := "ok"
	if err != nil {
		status = err.Error()
	}
	l.logf("store %s %s %d bytes %s: %s", op, key, n, time.Since(start).Round(time.Microsecond), status)
}

// Now logs and forwards.
func (l *Logging) Now(ctx context.Context) (time.Time, error) {
	start := time.Now()
	t, err := l.inner.Now(ctx)
	l.log("NOW", "", start, 0, err)
	return t, err
}

// Capabilities passes the inner store's through.
func (l *Logging) Capabilities() store.Capabilities { return l.inner.Capabilities() }

// Get logs and forwards.
func (l *Logging) Get(ctx context.Context, key string, max int64) ([]byte, error) {
	start := time.Now()
	b, err := l.inner.Get(ctx, key, max)
	l.down.Add(int64(len(b)))
	l.log("GET", key, start, int64(len(b)), err)
	return b, err
}

// GetRange logs and forwards.
func (l *Logging) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	start := time.Now()
	b, err := l.inner.GetRange(ctx, key, off, n)
	l.down.Add(int64(len(b)))
	l.log("GETRANGE", key, start, int64(len(b)), err)
	return b, err
}

// ReadRange logs and forwards (through a copy when the inner store reads
// no ranges into buffers).
func (l *Logging) ReadRange(ctx context.Context, key string, off int64, buf []byte) error {
	start := time.Now()
	err := store.ReadRangeInto(ctx, l.inner, key, off, buf)
	n := int64(len(buf))
	if err != nil {
		n = 0
	}
	l.down.Add(n)
	l.log("GETRANGE", key, start, n, err)
	return err
}

// OpenRange forwards (store.OpenRange on the inner store) and logs the
// stream as one request when it is closed, or at once when it cannot be
// opened: "OPENRANGE", with the bytes read, the time from the opening to
// the Close, and the first read error (io.EOF is none).
func (l *Logging) OpenRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	start := time.Now()
	rc, err := store.OpenRange(ctx, l.inner, key, off, n)
	if err != nil {
		l.log("OPENRANGE", key, start, 0, err)
		return nil, err
	}
	return &loggedStream{l: l, key: key, start: start, rc: rc}, nil
}

// loggedStream counts what is read of a stream and logs it on Close.
type loggedStream struct {
	l     *Logging
	key   string
	start time.Time
	rc    io.ReadCloser
	n     int64
	err   error // the first read error but io.EOF
	once  sync.Once
	cerr  error
}

func (s *loggedStream) Read(p []byte) (int, error) {
	n, err := s.rc.Read(p)
	s.n += int64(n)
	if err != nil && s.err == nil && !errors.Is(err, io.EOF) {
		s.err = err
	}
	return n, err
}

func (s *loggedStream) Close() error {
	s.once.Do(func() {
		s.cerr = s.rc.Close()
		s.l.down.Add(s.n)
		err := s.err
		if err == nil {
			err = s.cerr
		}
		s.l.log("OPENRANGE", s.key, s.start, s.n, err)
	})
	return s.cerr
}

// Put logs and forwards.
func (l *Logging) Put(ctx context.Context, key string, data []byte, opts store.PutOptions) (store.ObjectInfo, error) {
	start := time.Now()
	oi, err := l.inner.Put(ctx, key, data, opts)
	l.up.Add(int64(len(data)))
	op := "PUT"
	if opts.IfAbsent {
		op = "PUT(if-absent)"
	} else if opts.IfVersion != "" {
		op = "PUT(if-version)"
	}
	l.log(op, key, start, int64(len(data)), err)
	return oi, err
}

// Delete logs and forwards.
func (l *Logging) Delete(ctx context.Context, key string) error {
	start := time.Now()
	err := l.inner.Delete(ctx, key)
	l.log("DELETE", key, start, 0, err)
	return err
}

// DeleteIfPresent logs and forwards (store.DeleteAbsentOK on the inner
// store: one request where it implements store.IfPresentDeleter).
func (l *Logging) DeleteIfPresent(ctx context.Context, key string) error {
	start := time.Now()
	err := store.DeleteAbsentOK(ctx, l.inner, key)
	l.log("DELETE(if-present)", key, start, 0, err)
	return err
}

// Stat logs and forwards.
func (l *Logging) Stat(ctx context.Context, key string) (store.ObjectInfo, error) {
	start := time.Now()
	oi, err := l.inner.Stat(ctx, key)
	l.log("STAT", key, start, 0, err)
	return oi, err
}

// List logs and forwards (one entry per call, not per object).
func (l *Logging) List(ctx context.Context, prefix string, fn func(store.ObjectInfo) error) error {
	start := time.Now()
	n := int64(0)
	err := l.inner.List(ctx, prefix, func(oi store.ObjectInfo) error { n++; return fn(oi) })
	l.log("LIST", prefix+"*", start, n, err)
	return err
}

// RemoveStaleTemp passes through to the inner store when it has temp files
// to clean, and removes nothing otherwise.
func (l *Logging) RemoveStaleTemp(ctx context.Context, cutoff time.Time) (int, error) {
	tc, ok := l.inner.(store.TempCleaner)
	if !ok {
		return 0, nil
	}
	start := time.Now()
	n, err := tc.RemoveStaleTemp(ctx, cutoff)
	l.log("CLEANTEMP", "", start, int64(n), err)
	return n, err
}

// Close closes the inner store.
func (l *Logging) Close() error { return l.inner.Close() }
