package s3

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/fault"
)

// TestDeadlines: a server that accepts connections and never answers, and
// one that stops answering after Open, fail the request with
// store.ErrTimeout after one attempt (the listener sees no second
// connection, which a retry would open), instead of the SDK's retries
// multiplying the wait.
func TestDeadlines(t *testing.T) {
	eachServer(t, func(t *testing.T, e testEnv) {
		u, err := url.Parse(e.Endpoint)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		cases := []struct {
			name     string
			upstream string // "" accepts and never answers
			// op runs the request that must time out; it returns the
			// proxy's accepted count just before that request.
			op func(t *testing.T, cfg Config, p *fault.Proxy) (int64, error)
		}{
			{"silent at open", "", func(t *testing.T, cfg Config, p *fault.Proxy) (int64, error) {
				_, err := Open(ctx, cfg)
				return 0, err
			}},
			{"hangs after open", u.Host, func(t *testing.T, cfg Config, p *fault.Proxy) (int64, error) {
				s, err := Open(ctx, cfg)
				if err != nil {
					t.Fatalf("Open through the proxy: %v", err)
				}
				defer s.Close() //nolint:errcheck // only drops idle connections
				if _, err := s.Put(ctx, "k", []byte("v"), store.PutOptions{}); err != nil {
					t.Fatalf("Put before the freeze: %v", err)
				}
				p.Freeze()
				before := p.Accepted()
				_, err = s.Get(ctx, "k", 1<<30)
				return before, err
			}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				p, err := fault.NewProxy(c.upstream)
				if err != nil {
					t.Fatal(err)
				}
				defer p.Close() //nolint:errcheck // test teardown
				cfg := e.config(t, FlavorS3)
				t.Cleanup(func() { cleanPrefix(t, cfg) })
				through := cfg
				through.Endpoint = u.Scheme + "://" + p.Addr()
				through.ConnectTimeout, through.ResponseTimeout = time.Second, 300*time.Millisecond
				through.MaxConnections = 1
				before, err := c.op(t, through, p)
				if !errors.Is(err, store.ErrTimeout) {
					t.Fatalf("error %v, want store.ErrTimeout", err)
				}
				if got := p.Accepted() - before; got > 1 {
					t.Errorf("the request opened %d connections: the timed-out request was retried", got)
				}
			})
		}
	})
}

// TestMultipartParallel: the parts of a multipart upload are sent at once
// (each on its own connection: a proxy in front of the server counts them),
// not one after the other on one kept-alive connection.
func TestMultipartParallel(t *testing.T) {
	eachServer(t, func(t *testing.T, e testEnv) {
		u, err := url.Parse(e.Endpoint)
		if err != nil {
			t.Fatal(err)
		}
		p, err := fault.NewProxy(u.Host)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()              //nolint:errcheck // test teardown
		cfg := e.config(t, FlavorB2) // no probe: only this upload's connections
		t.Cleanup(func() { cleanPrefix(t, cfg) })
		through := cfg
		through.Endpoint = u.Scheme + "://" + p.Addr()
		through.MaxConnections = 4
		s, err := Open(context.Background(), through)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close() //nolint:errcheck // only drops idle connections
		s.multipartThreshold, s.partSize = 8<<20, 5<<20
		data := make([]byte, 15<<20+1) // four parts
		before := p.Accepted()
		if _, err := s.Put(context.Background(), "big", data, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		if got := p.Accepted() - before; got < 3 {
			t.Errorf("a 4-part upload used %d new connections: its parts were not sent in parallel", got)
		}
		got, err := s.Get(context.Background(), "big", 1<<30)
		if err != nil || len(got) != len(data) {
			t.Fatalf("Get after the upload: %d bytes, %v", len(got), err)
		}
	})
}
