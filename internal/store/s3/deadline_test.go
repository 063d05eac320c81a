package s3

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"testing"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"

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
				// The probe deletes its keys beside the Put: requests
				// that time out after the freeze must be the Get's.
				<-s.probeDone
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

// TestMultipartParallel: the parts of a multipart upload are in flight at
// once, not sent one after the other. Each UploadPart request waits, just
// before it goes on the wire, until all four parts have arrived there (a
// barrier in the client's middleware): an upload that sent its parts one at a
// time would never fill the barrier and fails at its deadline. Counting the
// connections a proxy accepts would not do: on a fast server one part can be
// answered before the next is sent, and the next reuses its connection.
func TestMultipartParallel(t *testing.T) {
	eachServer(t, func(t *testing.T, e testEnv) {
		const parts = 4
		arrived := make(chan struct{}, parts)
		allThere := make(chan struct{})
		var once sync.Once
		barrier := func(ctx context.Context) error {
			arrived <- struct{}{}
			if len(arrived) == parts {
				once.Do(func() { close(allThere) })
			}
			select {
			case <-allThere:
				return nil
			case <-ctx.Done():
				return fmt.Errorf("only %d of %d parts were in flight at once: %w", len(arrived), parts, ctx.Err())
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cfg := e.config(t, FlavorB2) // no probe: only the upload's requests
		t.Cleanup(func() { cleanPrefix(t, cfg) })
		cfg.MaxConnections = parts
		s, err := open(ctx, cfg, waitBeforeSend("UploadPart", barrier))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close() //nolint:errcheck // only drops idle connections
		s.multipartThreshold, s.partSize = 8<<20, 5<<20
		data := make([]byte, 15<<20+1) // four parts
		if _, err := s.Put(ctx, "big", data, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		got, err := s.Get(ctx, "big", 1<<30)
		if err != nil || len(got) != len(data) {
			t.Fatalf("Get after the upload: %d bytes, %v", len(got), err)
		}
	})
}

// waitBeforeSend is a client option that runs wait just before each request
// of the named operation is sent (after signing, as the last step before the
// HTTP transport); an error from wait fails the request.
func waitBeforeSend(operation string, wait func(context.Context) error) func(*s3.Options) {
	return func(o *s3.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			return stack.Deserialize.Add(middleware.DeserializeMiddlewareFunc("testWaitBeforeSend",
				func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (
					middleware.DeserializeOutput, middleware.Metadata, error) {
					if awsmiddleware.GetOperationName(ctx) == operation {
						if err := wait(ctx); err != nil {
							return middleware.DeserializeOutput{}, middleware.Metadata{}, err
						}
					}
					return next.HandleDeserialize(ctx, in)
				}), middleware.After)
		})
	}
}
