package fault_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/fault"
	"github.com/cloudstic/cloudstic/internal/store/local"
	"github.com/cloudstic/cloudstic/internal/store/storetest"
)

// TestConformance: with no faults configured the wrapper is a valid store.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return fault.New(local.New(t.TempDir()), fault.Config{Seed: 1})
	})
}

func TestCapabilitiesPassThrough(t *testing.T) {
	inner := local.New(t.TempDir())
	if got, want := fault.New(inner, fault.Config{}).Capabilities(), inner.Capabilities(); got != want {
		t.Fatalf("capabilities %+v, want %+v", got, want)
	}
}

// TestFaults runs each kind of fault at rate 1 and checks what the caller
// sees and what lands in the inner store.
func TestFaults(t *testing.T) {
	ctx := context.Background()
	data := []byte("0123456789abcdef")
	tests := []struct {
		name       string
		cfg        fault.Config
		preload    bool // the key exists before the operation
		op         func(s store.Store) ([]byte, error)
		wantErr    bool
		wantEOF    bool // the error also wraps io.ErrUnexpectedEOF
		wantStored bool // the key exists afterwards
		wantFired  fault.Fired
	}{
		{"put ok", fault.Config{}, false, put(data), false, false, true, fault.Fired{}},
		{"put error", fault.Config{ErrorRate: 1}, false, put(data), true, false, false, fault.Fired{Errors: 1}},
		{"put reply lost", fault.Config{AckLossRate: 1}, false, put(data), true, false, true, fault.Fired{AckLosses: 1}},
		{"delete error", fault.Config{ErrorRate: 1}, true, del, true, false, true, fault.Fired{Errors: 1}},
		{"delete ok", fault.Config{ShortReadRate: 1}, true, del, false, false, false, fault.Fired{}},
		{"get error", fault.Config{ErrorRate: 1}, true, get, true, false, true, fault.Fired{Errors: 1}},
		{"get short", fault.Config{ShortReadRate: 1}, true, get, true, true, true, fault.Fired{ShortReads: 1}},
		{"get range short", fault.Config{ShortReadRate: 1}, true, getRange, true, true, true, fault.Fired{ShortReads: 1}},
		{"read range error", fault.Config{ErrorRate: 1}, true, readRange, true, false, true, fault.Fired{Errors: 1}},
		{"read range short", fault.Config{ShortReadRate: 1}, true, readRange, true, true, true, fault.Fired{ShortReads: 1}},
		{"stat error", fault.Config{ErrorRate: 1}, true, stat, true, false, true, fault.Fired{Errors: 1}},
		{"list error", fault.Config{ErrorRate: 1}, true, list, true, false, true, fault.Fired{Errors: 1}},
		{"latency only", fault.Config{LatencyRate: 1, Latency: time.Millisecond}, true, get, false, false, true, fault.Fired{Latencies: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inner := local.New(t.TempDir())
			if tc.preload {
				if _, err := inner.Put(ctx, "k", data, store.PutOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			fs := fault.New(inner, tc.cfg)
			got, err := tc.op(fs)
			if f := fs.Fired(); f != tc.wantFired {
				t.Errorf("fired %+v, want %+v", f, tc.wantFired)
			}
			if tc.wantErr != (err != nil) {
				t.Fatalf("error %v, want error: %v", err, tc.wantErr)
			}
			if err != nil && !errors.Is(err, fault.ErrInjected) {
				t.Errorf("error %v does not wrap ErrInjected", err)
			}
			if tc.wantEOF != errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("error %v: wraps io.ErrUnexpectedEOF: %v, want %v", err, !tc.wantEOF, tc.wantEOF)
			}
			if tc.wantEOF && len(got) >= len(data) {
				t.Errorf("short read returned %d bytes, want fewer than %d", len(got), len(data))
			}
			_, serr := inner.Stat(ctx, "k")
			if stored := serr == nil; stored != tc.wantStored {
				t.Errorf("key stored afterwards: %v (%v), want %v", stored, serr, tc.wantStored)
			}
		})
	}
}

func put(data []byte) func(s store.Store) ([]byte, error) {
	return func(s store.Store) ([]byte, error) {
		_, err := s.Put(context.Background(), "k", data, store.PutOptions{})
		return nil, err
	}
}

func del(s store.Store) ([]byte, error) { return nil, s.Delete(context.Background(), "k") }
func get(s store.Store) ([]byte, error) { return s.Get(context.Background(), "k", 1<<30) }
func getRange(s store.Store) ([]byte, error) {
	return s.GetRange(context.Background(), "k", 2, 10)
}

// readRange reads through store.RangeReader; on error it returns the
// bytes before the first zero the fault left (data has no zero bytes).
func readRange(s store.Store) ([]byte, error) {
	buf := make([]byte, 10)
	if err := s.(store.RangeReader).ReadRange(context.Background(), "k", 2, buf); err != nil {
		return buf[:bytes.IndexByte(append(buf, 0), 0)], err
	}
	return buf, nil
}
func stat(s store.Store) ([]byte, error) {
	_, err := s.Stat(context.Background(), "k")
	return nil, err
}
func list(s store.Store) ([]byte, error) {
	return nil, s.List(context.Background(), "", func(store.ObjectInfo) error { return nil })
}

// TestLatencyHonoursContext: an injected wait ends when the context does.
func TestLatencyHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := fault.New(local.New(t.TempDir()), fault.Config{LatencyRate: 1, Latency: time.Hour})
	if _, err := s.Get(ctx, "k", 1<<30); !errors.Is(err, context.Canceled) {
		t.Fatalf("get with a cancelled context during an hour of latency: %v, want context.Canceled", err)
	}
}

// TestKillAt checks the kill point: before or after the n-th Put or
// Delete, counting both, and nothing else.
func TestKillAt(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name       string
		killAt     int
		midPut     bool
		wantKilled string // key of the operation that triggers the kill
		wantLanded bool
	}{
		{"before first", 1, false, "a", false},
		{"after first", 1, true, "a", true},
		{"before fourth (after a delete)", 4, false, "c", false},
		{"after fourth", 4, true, "c", true},
		{"never", 0, false, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inner := local.New(t.TempDir())
			kills := 0
			s := fault.New(inner, fault.Config{KillAt: tc.killAt, KillMidPut: tc.midPut, Kill: func() { kills++ }})
			killedAt := ""
			for _, k := range []string{"a", "b", "c", "d"} {
				if _, err := s.Get(ctx, k, 1<<30); !errors.Is(err, store.ErrNotFound) {
					t.Fatalf("get %s: %v", k, err) // reads are not counted
				}
				if _, err := s.Put(ctx, k, []byte(k), store.PutOptions{}); err != nil {
					if !errors.Is(err, fault.ErrInjected) {
						t.Fatalf("put %s: %v", k, err)
					}
					killedAt = k
				}
				if k == "b" {
					if err := s.Delete(ctx, "b"); err != nil {
						t.Fatal(err)
					}
				}
			}
			if killedAt != tc.wantKilled || kills != min(tc.killAt, 1) {
				t.Fatalf("killed at %q (%d kills), want %q", killedAt, kills, tc.wantKilled)
			}
			if tc.wantKilled == "" {
				return
			}
			_, err := inner.Stat(ctx, tc.wantKilled)
			if landed := err == nil; landed != tc.wantLanded {
				t.Errorf("%s landed: %v, want %v", tc.wantKilled, landed, tc.wantLanded)
			}
			if got := s.Mutations(); got != 5 {
				t.Errorf("%d mutations counted, want 5", got)
			}
		})
	}
}

// TestSeedRepeats: the same seed injects the same faults.
func TestSeedRepeats(t *testing.T) {
	pattern := func(seed int64) []bool {
		inner := local.New(t.TempDir())
		s := fault.New(inner, fault.Config{Seed: seed, ErrorRate: 0.3})
		var out []bool
		for range 64 {
			_, err := s.Stat(context.Background(), "k")
			out = append(out, errors.Is(err, fault.ErrInjected))
		}
		return out
	}
	a, b, c := pattern(7), pattern(7), pattern(8)
	if !equal(a, b) {
		t.Fatal("seed 7 gave two different fault patterns")
	}
	if equal(a, c) {
		t.Error("seeds 7 and 8 gave the same fault pattern")
	}
}

func equal(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A duplicated request arrives after later ones: a Put duplicated after a
// Delete brings the object back; a Delete duplicated after a new Put removes
// it again. Close waits for the duplicates.
func TestDuplicates(t *testing.T) {
	rows := []struct {
		name      string
		first     func(s store.Store) error
		then      func(s store.Store) error
		wantFound bool
	}{
		{"put after delete",
			func(s store.Store) error {
				_, err := s.Put(context.Background(), "k", []byte("a"), store.PutOptions{})
				return err
			},
			func(s store.Store) error { return s.Delete(context.Background(), "k") },
			true},
		{"delete after put",
			func(s store.Store) error { return s.Delete(context.Background(), "k") },
			func(s store.Store) error {
				_, err := s.Put(context.Background(), "k", []byte("b"), store.PutOptions{})
				return err
			},
			false},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			inner := local.New(t.TempDir())
			if _, err := inner.Put(context.Background(), "k", []byte("0"), store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			dup := fault.New(inner, fault.Config{DupRate: 1, Latency: 50 * time.Millisecond})
			if err := row.first(dup); err != nil {
				t.Fatal(err)
			}
			if err := row.then(inner); err != nil { // not duplicated
				t.Fatal(err)
			}
			if err := dup.Close(); err != nil {
				t.Fatal(err)
			}
			if f := dup.Fired(); f != (fault.Fired{Duplicates: 1}) {
				t.Errorf("fired %+v, want one duplicate", f)
			}
			_, err := inner.Get(context.Background(), "k", 1<<30)
			if found := err == nil; found != row.wantFound {
				t.Fatalf("after the duplicate: found=%t (%v), want %t", found, err, row.wantFound)
			}
		})
	}
	if c, err := fault.Parse("dup=0.25"); err != nil || c.DupRate != 0.25 {
		t.Fatalf("parse dup: %+v %v", c, err)
	}
}

// TestReadRangeShort: an injected short ReadRange leaves a correct prefix
// and zeros after it, never other bytes.
func TestReadRangeShort(t *testing.T) {
	ctx := context.Background()
	data := []byte("0123456789abcdef")
	inner := local.New(t.TempDir())
	if _, err := inner.Put(ctx, "k", data, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	for seed := range int64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			s := fault.New(inner, fault.Config{Seed: seed, ShortReadRate: 1})
			buf := bytes.Repeat([]byte{0xff}, 12)
			err := s.ReadRange(ctx, "k", 3, buf)
			if !errors.Is(err, io.ErrUnexpectedEOF) || !errors.Is(err, fault.ErrInjected) {
				t.Fatalf("error %v, want an injected short read", err)
			}
			n := bytes.IndexByte(buf, 0)
			if n < 0 || !bytes.Equal(buf[:n], data[3:3+n]) || !bytes.Equal(buf[n:], make([]byte, len(buf)-n)) {
				t.Fatalf("buffer %q: want a prefix of %q, then zeros", buf, data[3:15])
			}
		})
	}
}

// TestOpenRangeFaults: a stream through the fault store fails at its
// opening at ErrorRate, and at ShortReadRate gives a strict prefix of its
// range, then an injected error wrapping io.ErrUnexpectedEOF.
func TestOpenRangeFaults(t *testing.T) {
	ctx := context.Background()
	data := []byte("0123456789abcdef")
	inner := local.New(t.TempDir())
	if _, err := inner.Put(ctx, "k", data, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := fault.New(inner, fault.Config{ErrorRate: 1}).OpenRange(ctx, "k", 0, 4); !errors.Is(err, fault.ErrInjected) {
		t.Fatalf("open at ErrorRate 1: %v, want an injected error", err)
	}
	for seed := range int64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			s := fault.New(inner, fault.Config{Seed: seed, ShortReadRate: 1})
			rc, err := s.OpenRange(ctx, "k", 3, 12)
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close() //nolint:errcheck // read-only
			got, err := io.ReadAll(rc)
			if !errors.Is(err, io.ErrUnexpectedEOF) || !errors.Is(err, fault.ErrInjected) {
				t.Fatalf("error %v, want an injected short stream", err)
			}
			if len(got) >= 12 || !bytes.Equal(got, data[3:3+len(got)]) {
				t.Fatalf("stream gave %q: want a strict prefix of %q", got, data[3:15])
			}
			if s.Fired().ShortReads != 1 {
				t.Fatalf("fired %+v, want one short read", s.Fired())
			}
		})
	}
}
