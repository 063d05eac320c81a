package wrap_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
	"github.com/cloudstic/cloudstic/internal/store/wrap"
)

// plain hides its inner store's ReadRange, as a backend without one.
type plain struct{ store.Store }

// TestReadRangeForwards: the wrappers read ranges into the caller's buffer
// over an inner store with ReadRange and over one without (then GetRange
// and a copy), and Logging counts each read as one request.
func TestReadRangeForwards(t *testing.T) {
	ctx := context.Background()
	data := []byte("0123456789abcdefghij")
	inners := []struct {
		name string
		st   func(t *testing.T) store.Store
	}{
		{"range reader", func(t *testing.T) store.Store { return local.New(t.TempDir()) }},
		{"get range only", func(t *testing.T) store.Store { return plain{local.New(t.TempDir())} }},
	}
	wrappers := []struct {
		name string
		wrap func(store.Store) store.Store
	}{
		{"logging", func(s store.Store) store.Store { return wrap.NewLogging(s, nil) }},
		{"limited", func(s store.Store) store.Store { return wrap.Limit(s, store.Capabilities{}) }},
	}
	for _, in := range inners {
		for _, w := range wrappers {
			t.Run(in.name+"/"+w.name, func(t *testing.T) {
				inner := in.st(t)
				if _, err := inner.Put(ctx, "k", data, store.PutOptions{}); err != nil {
					t.Fatal(err)
				}
				s := w.wrap(inner)
				rr, ok := s.(store.RangeReader)
				if !ok {
					t.Fatal("wrapper does not read ranges into buffers")
				}
				buf := bytes.Repeat([]byte{'x'}, 5)
				if err := rr.ReadRange(ctx, "k", 4, buf); err != nil || string(buf) != "456789"[:5] {
					t.Fatalf("ReadRange: %q, %v", buf, err)
				}
				if err := rr.ReadRange(ctx, "k", 18, buf); err == nil || errors.Is(err, store.ErrNotFound) {
					t.Fatalf("read past the end: %v, want an error other than not found", err)
				}
				if err := rr.ReadRange(ctx, "absent", 0, buf); !errors.Is(err, store.ErrNotFound) {
					t.Fatalf("missing key: %v, want ErrNotFound", err)
				}
				if l, ok := s.(*wrap.Logging); ok {
					if c := l.Counts(); c.Requests != 3 || c.BytesDown != 5 {
						t.Fatalf("counts %+v, want 3 requests and 5 bytes down", c)
					}
				}
			})
		}
	}
}
