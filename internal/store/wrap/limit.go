package wrap

import (
	"context"
	"io"
	"time"

	"github.com/cloudstic/cloudstic/internal/store"
)

// Limited declares fewer capabilities than its inner store: what a user
// declares for an S3-compatible server that accepts the conditional headers
// without honouring them, and what tests use to run every lock protocol on
// every real store. A conditional Put it does not declare is refused with
// store.ErrUnsupported, as on a store that really lacks it.
type Limited struct {
	store.Store
	caps store.Capabilities
}

// Limit wraps inner, declaring caps intersected with inner's own.
func Limit(inner store.Store, caps store.Capabilities) *Limited {
	own := inner.Capabilities()
	return &Limited{Store: inner, caps: store.Capabilities{
		CreateIfAbsent: caps.CreateIfAbsent && own.CreateIfAbsent,
		CompareAndSwap: caps.CompareAndSwap && own.CompareAndSwap,
	}}
}

// Capabilities returns the declared capabilities.
func (l *Limited) Capabilities() store.Capabilities { return l.caps }

// Put refuses conditional writes that are not declared.
func (l *Limited) Put(ctx context.Context, key string, data []byte, opts store.PutOptions) (store.ObjectInfo, error) {
	if err := store.CheckPutOptions(l.caps, opts); err != nil {
		return store.ObjectInfo{}, err
	}
	return l.Store.Put(ctx, key, data, opts)
}

// Now forwards (spelled out so that the wrapper's method set is explicit).
func (l *Limited) Now(ctx context.Context) (time.Time, error) { return l.Store.Now(ctx) }

// Describe names the inner store.
func (l *Limited) Describe() string { return store.Describe(l.Store) }

// RequestCost is the inner store's.
func (l *Limited) RequestCost() int64 { return store.RequestCost(l.Store) }

// ReadRange forwards (through a copy when the inner store reads no ranges
// into buffers).
func (l *Limited) ReadRange(ctx context.Context, key string, off int64, buf []byte) error {
	return store.ReadRangeInto(ctx, l.Store, key, off, buf)
}

// OpenRange forwards (store.OpenRange: a whole read when the inner store
// streams no ranges).
func (l *Limited) OpenRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	return store.OpenRange(ctx, l.Store, key, off, n)
}
