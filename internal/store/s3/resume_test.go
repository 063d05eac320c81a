package s3

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net/url"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/fault"
	"github.com/cloudstic/cloudstic/internal/store/storetest"
)

// TestOpenRangeResumes: a stream whose connection is reset between two
// reads goes on with a new request at exactly the byte it had reached;
// one whose object is gone or was rewritten by then fails with
// store.ErrNotFound or store.ErrChanged, and one whose context ended fails
// without a new request. Every byte it returned is the object's. The
// object is larger than what the proxy and the sockets can hold, so the
// cut leaves most of it unsent.
func TestOpenRangeResumes(t *testing.T) {
	data := make([]byte, 24<<20+12345)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	const off, head = 1000, 1 << 20
	want := data[off : len(data)-off]
	type env struct {
		s      *Store // through p
		p      *fault.Proxy
		other  *Store // direct to the server
		rc     io.Reader
		got    *bytes.Buffer
		cancel context.CancelFunc
	}
	cases := []struct {
		name     string
		fault    func(t *testing.T, e env)
		err      error // nil: the whole range
		requests int64 // sent after the fault
	}{
		{"connection reset", func(t *testing.T, e env) { e.p.Cut() }, nil, 1},
		{"reset in a read", func(t *testing.T, e env) { e.p.CutAfter(100_000) }, nil, 1},
		{"reset twice", func(t *testing.T, e env) {
			// What the sockets hold of the first answer is read before
			// the stream finds the cut: read on until it asked again.
			before, _, _ := e.s.Stats()
			e.p.Cut()
			for after := before; after == before; after, _, _ = e.s.Stats() {
				if _, err := io.CopyN(e.got, e.rc, 4567); err != nil {
					t.Fatalf("read between the cuts: %v", err)
				}
			}
			e.p.Cut()
		}, nil, 2},
		{"object deleted", func(t *testing.T, e env) {
			e.p.Cut()
			if err := e.other.Delete(context.Background(), "pack"); err != nil {
				t.Fatal(err)
			}
		}, store.ErrNotFound, 1},
		{"object rewritten", func(t *testing.T, e env) {
			e.p.Cut()
			if _, err := e.other.Put(context.Background(), "pack", bytes.Repeat([]byte("x"), len(data)), store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
		}, store.ErrChanged, 1},
		{"context cancelled", func(t *testing.T, e env) { e.p.Cut(); e.cancel() }, context.Canceled, 0},
	}
	eachServer(t, func(t *testing.T, srv testEnv) {
		u, err := url.Parse(srv.Endpoint)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				cfg := srv.config(t, FlavorS3)
				other := openTest(t, cfg)
				if _, err := other.Put(ctx, "pack", data, store.PutOptions{}); err != nil {
					t.Fatal(err)
				}
				p, err := fault.NewProxy(u.Host)
				if err != nil {
					t.Fatal(err)
				}
				defer p.Close() //nolint:errcheck // test teardown
				through := cfg
				through.Endpoint = u.Scheme + "://" + p.Addr()
				s, err := Open(ctx, through)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close() //nolint:errcheck // only drops idle connections
				// The probe's requests must not count as the stream's.
				<-s.probeDone
				rc, err := s.OpenRange(ctx, "pack", off, int64(len(want)))
				if err != nil {
					t.Fatal(err)
				}
				defer rc.Close() //nolint:errcheck // read-only stream
				e := env{s: s, p: p, other: other, rc: rc, got: new(bytes.Buffer), cancel: cancel}
				if _, err := io.CopyN(e.got, rc, head); err != nil {
					t.Fatalf("read before the fault: %v", err)
				}
				before, _, _ := s.Stats()
				c.fault(t, e)
				_, err = io.Copy(e.got, rc)
				storetest.CheckResumed(t, e.got.Bytes(), want, err, c.err)
				if after, _, _ := s.Stats(); after-before != c.requests {
					t.Errorf("%d requests after the fault, want %d", after-before, c.requests)
				}
				t.Logf("read %d bytes; error: %v", e.got.Len(), err)
			})
		}
	})
}
