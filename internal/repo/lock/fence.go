package lock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/cloudstic/cloudstic/internal/store"
)

// Fence returns st wrapped so that every request through it runs under this
// lease: it is refused (with an error wrapping ErrLeaseLost) once the lease
// is lost, released or past its safe end, and it is cancelled when the
// lease is lost while it runs, which the watchdog does at the safe end. So
// its deadline is the safe end as it stands while the request runs: a long
// upload outlives the safe end it started under as long as the lease is
// refreshed meanwhile, and a holder whose lease runs out sends nothing
// after it. Engines write through the fenced store of the lease they run
// under. A store that leaves temp files behind (store.TempCleaner) stays
// one: its clean-up is fenced like every other request.
func (l *Lock) Fence(st store.Store) store.Store {
	f := &fenced{inner: st, l: l}
	if tc, ok := st.(store.TempCleaner); ok {
		return &fencedCleaner{fenced: f, cleaner: tc}
	}
	return f
}

type fenced struct {
	inner store.Store
	l     *Lock
}

// begin admits one request to key ("" for one without a key). The caller
// must call end with the request's error: a request cut short by the
// lease's loss or release is counted as refused (Lock.Refused), as is one
// refused here.
func (f *fenced) begin(ctx context.Context, key string) (_ context.Context, end func(error), _ error) {
	if err := f.l.valid(); err != nil {
		f.l.refuse(key)
		return nil, nil, err
	}
	if f.l.leaseCtx.Err() != nil {
		f.l.refuse(key)
		return nil, nil, fmt.Errorf("%w: %s was released", ErrLeaseLost, f.l.Info().Key)
	}
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(f.l.leaseCtx, cancel)
	return ctx, func(err error) {
		cutShort := !stop() // the lease ended while the request ran
		cancel()
		if err != nil && cutShort {
			f.l.refuse(key)
		}
	}, nil
}

func (f *fenced) Capabilities() store.Capabilities { return f.inner.Capabilities() }
func (f *fenced) Close() error                     { return f.inner.Close() }

func (f *fenced) Get(ctx context.Context, key string, max int64) ([]byte, error) {
	ctx, end, err := f.begin(ctx, key)
	if err != nil {
		return nil, err
	}
	data, err := f.inner.Get(ctx, key, max)
	end(err)
	return data, err
}

func (f *fenced) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	ctx, end, err := f.begin(ctx, key)
	if err != nil {
		return nil, err
	}
	data, err := f.inner.GetRange(ctx, key, off, n)
	end(err)
	return data, err
}

// ReadRange is GetRange into the caller's buffer, fenced the same way.
func (f *fenced) ReadRange(ctx context.Context, key string, off int64, buf []byte) error {
	ctx, end, err := f.begin(ctx, key)
	if err != nil {
		return err
	}
	err = store.ReadRangeInto(ctx, f.inner, key, off, buf)
	end(err)
	return err
}

// OpenRange streams a range (store.OpenRange on the inner store) as one
// request under the lease: admitted when it is opened, it ends when the
// stream is closed, and no Read returns a byte once the lease is lost,
// released or past its safe end (the stream's context is cancelled then,
// and each Read checks the lease first).
func (f *fenced) OpenRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	ctx, end, err := f.begin(ctx, key)
	if err != nil {
		return nil, err
	}
	rc, err := store.OpenRange(ctx, f.inner, key, off, n)
	if err != nil {
		end(err)
		return nil, err
	}
	return &fencedStream{f: f, key: key, ctx: ctx, rc: rc, end: end}, nil
}

// fencedStream is a stream read under the lease; Close ends its request
// with the first read error (io.EOF is none). A stream whose Read the
// lease's end refused is counted as refused once.
type fencedStream struct {
	f       *fenced
	key     string
	ctx     context.Context
	rc      io.ReadCloser
	end     func(error)
	err     error
	refused bool
	once    sync.Once
	cerr    error
}

func (s *fencedStream) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	l := s.f.l
	err := l.valid()
	if err == nil && l.leaseCtx.Err() != nil {
		err = fmt.Errorf("%w: %s was released", ErrLeaseLost, l.Info().Key)
	}
	if err != nil {
		s.err, s.refused = err, true
		return 0, err
	}
	if err := s.ctx.Err(); err != nil {
		s.err = err
		return 0, err
	}
	n, err := s.rc.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		s.err = err
	}
	return n, err
}

func (s *fencedStream) Close() error {
	s.once.Do(func() {
		s.cerr = s.rc.Close()
		if s.refused {
			s.end(nil)
			s.f.l.refuse(s.key)
			return
		}
		s.end(s.err)
	})
	return s.cerr
}

func (f *fenced) Put(ctx context.Context, key string, data []byte, opts store.PutOptions) (store.ObjectInfo, error) {
	ctx, end, err := f.begin(ctx, key)
	if err != nil {
		return store.ObjectInfo{}, err
	}
	f.l.trace(TraceWrite, key)
	info, err := f.inner.Put(ctx, key, data, opts)
	f.l.trace(TraceWritten, key)
	end(err)
	return info, err
}

func (f *fenced) Delete(ctx context.Context, key string) error {
	ctx, end, err := f.begin(ctx, key)
	if err != nil {
		return err
	}
	f.l.trace(TraceWrite, key)
	err = f.inner.Delete(ctx, key)
	f.l.trace(TraceWritten, key)
	end(err)
	return err
}

func (f *fenced) Stat(ctx context.Context, key string) (store.ObjectInfo, error) {
	ctx, end, err := f.begin(ctx, key)
	if err != nil {
		return store.ObjectInfo{}, err
	}
	info, err := f.inner.Stat(ctx, key)
	end(err)
	return info, err
}

func (f *fenced) List(ctx context.Context, prefix string, fn func(store.ObjectInfo) error) error {
	ctx, end, err := f.begin(ctx, prefix)
	if err != nil {
		return err
	}
	err = f.inner.List(ctx, prefix, fn)
	end(err)
	return err
}

func (f *fenced) Now(ctx context.Context) (time.Time, error) {
	ctx, end, err := f.begin(ctx, "")
	if err != nil {
		return time.Time{}, err
	}
	now, err := f.inner.Now(ctx)
	end(err)
	return now, err
}

// Describe names the inner store.
func (f *fenced) Describe() string { return store.Describe(f.inner) }

// RequestCost is the inner store's (store.RequestCoster).
func (f *fenced) RequestCost() int64 { return store.RequestCost(f.inner) }

// fencedCleaner is the fence of a store that leaves temp files behind.
type fencedCleaner struct {
	*fenced
	cleaner store.TempCleaner
}

// RemoveStaleTemp deletes the inner store's stale temp files, fenced like
// a Delete.
func (f *fencedCleaner) RemoveStaleTemp(ctx context.Context, cutoff time.Time) (int, error) {
	ctx, end, err := f.begin(ctx, "")
	if err != nil {
		return 0, err
	}
	f.l.trace(TraceWrite, "")
	n, err := f.cleaner.RemoveStaleTemp(ctx, cutoff)
	f.l.trace(TraceWritten, "")
	end(err)
	return n, err
}
