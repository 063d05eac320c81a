package wrap_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
	"github.com/cloudstic/cloudstic/internal/store/wrap"
)

// readStream opens a stream through s and reads it to its end.
func readStream(ctx context.Context, s store.RangeOpener, key string, off, n int64) (string, error) {
	rc, err := s.OpenRange(ctx, key, off, n)
	if err != nil {
		return "", err
	}
	defer rc.Close() //nolint:errcheck // read-only; the reads report errors
	b, err := io.ReadAll(rc)
	return string(b), err
}

// TestOpenRangeForwards: the wrappers stream ranges over an inner store
// that streams them and over one that does not (then a whole read), and
// Logging logs each stream as one request when it is closed, with the
// bytes read.
func TestOpenRangeForwards(t *testing.T) {
	ctx := context.Background()
	data := []byte("0123456789abcdefghij")
	inners := []struct {
		name string
		st   func(t *testing.T) store.Store
	}{
		{"range opener", func(t *testing.T) store.Store { return local.New(t.TempDir()) }},
		{"get range only", func(t *testing.T) store.Store { return plain{local.New(t.TempDir())} }},
	}
	var mu sync.Mutex
	var lines []string
	logf := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, fmt.Sprintf(format, args...))
	}
	wrappers := []struct {
		name string
		wrap func(store.Store) store.Store
	}{
		{"logging", func(s store.Store) store.Store { return wrap.NewLogging(s, logf) }},
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
				ro, ok := s.(store.RangeOpener)
				if !ok {
					t.Fatal("wrapper does not stream ranges")
				}
				lines = nil
				rc, err := ro.OpenRange(ctx, "k", 4, 5)
				if err != nil {
					t.Fatal(err)
				}
				if got, err := io.ReadAll(rc); err != nil || string(got) != "45678" {
					t.Fatalf("stream: %q, %v", got, err)
				}
				if len(lines) != 0 {
					t.Fatalf("logged before the stream was closed: %q", lines)
				}
				if err := rc.Close(); err != nil {
					t.Fatal(err)
				}
				if got, err := readStream(ctx, ro, "k", 18, 5); err == nil || errors.Is(err, store.ErrNotFound) {
					t.Fatalf("stream past the end: %q, %v, want an error other than not found", got, err)
				}
				if _, err := readStream(ctx, ro, "absent", 0, 5); !errors.Is(err, store.ErrNotFound) {
					t.Fatalf("missing key: %v, want ErrNotFound", err)
				}
				l, ok := s.(*wrap.Logging)
				if !ok {
					return
				}
				if c := l.Counts(); c.Requests != 3 || c.BytesDown != 5 {
					t.Fatalf("counts %+v, want 3 requests and 5 bytes down", c)
				}
				if len(lines) != 3 || !strings.HasPrefix(lines[0], "store OPENRANGE k 5 bytes ") || !strings.HasSuffix(lines[0], ": ok") {
					t.Fatalf("log lines %q, want one a stream, the first of 5 bytes and ok", lines)
				}
			})
		}
	}
}
