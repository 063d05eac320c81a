package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"testing/iotest"
	"time"

	"github.com/cloudstic/cloudstic/internal/store"
)

// openRangeStreams is how many streams testOpenRange opens one after
// another, each closed half read: more than any store's connection limit,
// so that a stream whose Close keeps its slot blocks the ones after it.
const openRangeStreams = 40

// readStream opens a stream of key and reads it all through r (the stream
// itself, or a wrapper of it such as iotest.OneByteReader): the error is
// the opening's or the reading's.
func readStream(ctx context.Context, s store.Store, key string, off, n int64,
	wrap func(io.Reader) io.Reader) ([]byte, error) {
	rc, err := store.OpenRange(ctx, s, key, off, n)
	if err != nil {
		return nil, err
	}
	defer rc.Close() //nolint:errcheck // read-only; the reads report errors
	return io.ReadAll(wrap(rc))
}

// testOpenRange: store.OpenRange (a stream where the store declares
// store.RangeOpener) gives exactly the range's bytes, in one read or in
// many small ones; a range past the end fails (at the opening or on a
// read, never as a short stream), a missing key is ErrNotFound, and
// streams closed before their end release what they hold.
func testOpenRange(t *testing.T, s store.Store) {
	data := randBytes(t, 1<<20)
	mustPut(t, s, "r/obj", data)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	readers := []struct {
		name string
		wrap func(io.Reader) io.Reader
	}{
		{"whole", func(r io.Reader) io.Reader { return r }},
		{"bytewise", iotest.OneByteReader},
	}
	for _, c := range rangeCases {
		for _, rd := range readers {
			if rd.name == "bytewise" && c.n > 64<<10 {
				continue // a byte a Read is slow on a network: the smaller ranges tell enough
			}
			t.Run(fmt.Sprintf("%d+%d/%s", c.off, c.n, rd.name), func(t *testing.T) {
				got, err := readStream(ctx, s, "r/obj", c.off, c.n, rd.wrap)
				if !c.ok {
					if err == nil {
						t.Fatalf("stream past the end gave %d bytes and no error", len(got))
					}
					if errors.Is(err, store.ErrNotFound) {
						t.Fatalf("stream past the end of an existing object said not found: %v", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, data[c.off:c.off+c.n]) {
					t.Fatalf("wrong bytes (%d of %d)", len(got), c.n)
				}
			})
		}
	}
	t.Run("missing", func(t *testing.T) {
		if _, err := readStream(ctx, s, "r/absent", 0, 10, iotest.OneByteReader); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("missing key: got %v, want ErrNotFound", err)
		}
	})
	t.Run("empty", func(t *testing.T) {
		for _, off := range []int64{0, 1000, 1 << 20} {
			got, err := readStream(ctx, s, "r/obj", off, 0, iotest.OneByteReader)
			if err != nil || len(got) != 0 {
				t.Fatalf("zero bytes at %d: %d bytes, %v", off, len(got), err)
			}
		}
	})
	t.Run("closed early", func(t *testing.T) { testStreamsClosedEarly(ctx, t, s, data) })
}

// testStreamsClosedEarly opens openRangeStreams streams one after another,
// each closed after reading half its range, then reads one to its end:
// a stream that keeps its connection when closed makes the later ones
// wait for ever (here: until ctx's deadline, and the test fails).
func testStreamsClosedEarly(ctx context.Context, t *testing.T, s store.Store, data []byte) {
	const n = 256 << 10
	for i := range openRangeStreams {
		off := int64(i) * 4096
		rc, err := store.OpenRange(ctx, s, "r/obj", off, n)
		if err != nil {
			t.Fatalf("stream %d: %v", i, err)
		}
		half := make([]byte, n/2)
		if _, err := io.ReadFull(rc, half); err != nil {
			t.Fatalf("stream %d: %v", i, err)
		}
		if !bytes.Equal(half, data[off:off+n/2]) {
			t.Fatalf("stream %d: wrong bytes", i)
		}
		if err := rc.Close(); err != nil {
			t.Fatalf("stream %d: Close: %v", i, err)
		}
	}
	got, err := readStream(ctx, s, "r/obj", 1000, n, func(r io.Reader) io.Reader { return r })
	if err != nil || !bytes.Equal(got, data[1000:1000+n]) {
		t.Fatalf("stream after %d closed early: %v, right bytes: %v", openRangeStreams, err, bytes.Equal(got, data[1000:1000+n]))
	}
}
