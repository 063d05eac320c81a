package s3

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/store"
)

// OpenRange is one request, holding its connection slot from the opening
// to the Close: with one slot, a Stat waits while a stream is open and
// goes through once it is closed (half read).
func TestOpenRangeHoldsSlotUntilClose(t *testing.T) {
	eachServer(t, func(t *testing.T, e testEnv) {
		ctx := context.Background()
		cfg := e.config(t, FlavorS3)
		cfg.MaxConnections = 1
		s := openTest(t, cfg)
		data := bytes.Repeat([]byte("0123456789"), 1000)
		if _, err := s.Put(ctx, "k", data, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		before, _, _ := s.Stats()
		rc, err := s.OpenRange(ctx, "k", 5, 5000)
		if err != nil {
			t.Fatal(err)
		}
		half := make([]byte, 2500)
		if _, err := io.ReadFull(rc, half); err != nil || !bytes.Equal(half, data[5:2505]) {
			t.Fatalf("read: %v, right bytes: %v", err, bytes.Equal(half, data[5:2505]))
		}
		if after, _, _ := s.Stats(); after != before+1 {
			t.Fatalf("%d requests for one stream, want 1", after-before)
		}
		short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		if _, err := s.Stat(short, "k"); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Stat while the only slot is held by a stream: %v, want it to wait", err)
		}
		if err := rc.Close(); err != nil {
			t.Fatal(err)
		}
		if err := rc.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		bounded, cancel2 := context.WithTimeout(ctx, 10*time.Second)
		defer cancel2()
		if _, err := s.Stat(bounded, "k"); err != nil {
			t.Fatalf("Stat after the stream was closed: %v", err)
		}
	})
}

// A server that ignores the Range header (here: the header never reaches
// it) answers with the whole object: OpenRange refuses the answer at once,
// and gives its slot back.
func TestOpenRangeIgnoredRange(t *testing.T) {
	eachServer(t, func(t *testing.T, e testEnv) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cfg := e.config(t, FlavorB2) // no probe: it needs no Range
		cfg.MaxConnections = 1
		s, err := open(ctx, cfg, stripHeaders("Range"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cleanPrefix(t, cfg) })
		defer s.Close() //nolint:errcheck // only drops idle connections; it never fails
		if _, err := s.Put(ctx, "k", make([]byte, 1000), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		for range 3 { // a slot kept by a refused answer blocks the next
			rc, err := s.OpenRange(ctx, "k", 10, 20)
			if err == nil {
				rc.Close() //nolint:errcheck // the test fails anyway
				t.Fatal("an answer of the whole object was accepted as a range")
			}
			if errors.Is(err, store.ErrNotFound) || errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("OpenRange: %v, want a refused answer", err)
			}
		}
	})
}
