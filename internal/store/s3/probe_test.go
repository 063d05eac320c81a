package s3

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/cloudstic/cloudstic/internal/store"
)

// stripHeaders is a fault-injecting client option: it removes the named
// request headers before the request is signed and sent, so the server
// never sees them, as if it ignored them. (A reverse proxy stripping them
// would break the SigV4 signature, which covers these headers.)
func stripHeaders(names ...string) func(*s3.Options) {
	return func(o *s3.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			return stack.Build.Add(middleware.BuildMiddlewareFunc("testStripHeaders",
				func(ctx context.Context, in middleware.BuildInput, next middleware.BuildHandler) (
					middleware.BuildOutput, middleware.Metadata, error) {
					if req, ok := in.Request.(*smithyhttp.Request); ok {
						for _, n := range names {
							req.Header.Del(n)
						}
					}
					return next.HandleBuild(ctx, in)
				}), middleware.After)
		})
	}
}

func TestProbeDetectsIgnoredHeaders(t *testing.T) {
	eachServer(t, func(t *testing.T, e testEnv) {
		cases := []struct {
			name  string
			strip []string
			want  store.Capabilities
		}{
			{"HonoursBoth", nil, store.Capabilities{CreateIfAbsent: true, CompareAndSwap: true}},
			{"IgnoresIfNoneMatch", []string{"If-None-Match"}, store.Capabilities{CompareAndSwap: true}},
			{"IgnoresIfMatch", []string{"If-Match"}, store.Capabilities{CreateIfAbsent: true}},
			{"IgnoresBoth", []string{"If-None-Match", "If-Match"}, store.Capabilities{}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				cfg := e.config(t, FlavorS3)
				s, err := open(context.Background(), cfg, stripHeaders(c.strip...))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cleanPrefix(t, cfg) })
				defer s.Close() //nolint:errcheck // only drops idle connections; it never fails
				if got := s.Capabilities(); got != c.want {
					t.Fatalf("Capabilities = %+v, want %+v", got, c.want)
				}
				<-s.probeDone // the key is deleted after the result is out
				var left []string
				err = s.List(context.Background(), "", func(oi store.ObjectInfo) error { left = append(left, oi.Key); return nil })
				if err != nil {
					t.Fatal(err)
				}
				if len(left) != 0 {
					t.Fatalf("probe left keys behind: %v", left)
				}
			})
		}
	})
}

// failProbeWrites is a fault-injecting client option: every PutObject of a
// probe key fails with errInjected before it is sent.
func failProbeWrites() func(*s3.Options) {
	return func(o *s3.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("testFailProbe",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (
					middleware.InitializeOutput, middleware.Metadata, error) {
					if p, ok := in.Parameters.(*s3.PutObjectInput); ok && p.Key != nil && strings.Contains(*p.Key, "probe/") {
						return middleware.InitializeOutput{}, middleware.Metadata{}, errInjected
					}
					return next.HandleInitialize(ctx, in)
				}), middleware.Before)
		})
	}
}

var errInjected = errors.New("injected probe failure")

// TestProbeRunsBesideOpen: Open returns before the capability probe ends,
// and what depends on the probe waits for it. A conditional Put sent at
// once succeeds (it would be refused as undeclared if it did not wait),
// and a failed probe fails every write with its error while reads work.
func TestProbeRunsBesideOpen(t *testing.T) {
	eachServer(t, func(t *testing.T, e testEnv) {
		ctx := context.Background()
		t.Run("WritesWait", func(t *testing.T) {
			cfg := e.config(t, FlavorS3)
			s, err := open(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cleanPrefix(t, cfg) })
			defer s.Close() //nolint:errcheck // only drops idle connections; it never fails
			if _, err := s.Put(ctx, "k", []byte("v"), store.PutOptions{IfAbsent: true}); err != nil {
				t.Fatalf("create-if-absent Put right after Open: %v", err)
			}
			if _, err := s.Put(ctx, "k", []byte("w"), store.PutOptions{IfAbsent: true}); !errors.Is(err, store.ErrExists) {
				t.Fatalf("second create-if-absent Put: %v, want ErrExists", err)
			}
		})
		t.Run("FailedProbeFailsWrites", func(t *testing.T) {
			cfg := e.config(t, FlavorS3)
			s, err := open(ctx, cfg, failProbeWrites())
			if err != nil {
				t.Fatalf("Open failed before the probe ended: %v", err)
			}
			t.Cleanup(func() { cleanPrefix(t, cfg) })
			defer s.Close() //nolint:errcheck // only drops idle connections; it never fails
			if _, err := s.Get(ctx, "missing", 0); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Get after a failed probe: %v, want ErrNotFound", err)
			}
			if _, err := s.Put(ctx, "k", []byte("v"), store.PutOptions{}); !errors.Is(err, errInjected) {
				t.Errorf("Put after a failed probe: %v, want the probe's error", err)
			}
			if err := s.Delete(ctx, "k"); !errors.Is(err, errInjected) {
				t.Errorf("Delete after a failed probe: %v, want the probe's error", err)
			}
			if got := s.Capabilities(); got != (store.Capabilities{}) {
				t.Errorf("Capabilities after a failed probe = %+v, want none", got)
			}
		})
	})
}
