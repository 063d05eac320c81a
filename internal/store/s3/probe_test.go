package s3

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
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

// probeBarrier is a fault-injecting client option: it holds every
// PutObject of a probe key until size of them are held, then lets them all
// go at once, recording the keys of each such round. A probe whose writes
// do not come size at a time would wait for ever: it fails with ctx's
// error instead.
type probeBarrier struct {
	ctx  context.Context
	size int

	mu      sync.Mutex
	rounds  [][]string // the last one is still filling up if shorter than size
	release chan struct{}
}

func (b *probeBarrier) option() func(*s3.Options) {
	return func(o *s3.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("testProbeBarrier",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (
					middleware.InitializeOutput, middleware.Metadata, error) {
					if p, ok := in.Parameters.(*s3.PutObjectInput); ok && p.Key != nil && strings.Contains(*p.Key, "probe/") {
						if err := b.wait(ctx, *p.Key); err != nil {
							return middleware.InitializeOutput{}, middleware.Metadata{}, err
						}
					}
					return next.HandleInitialize(ctx, in)
				}), middleware.Before)
		})
	}
}

// wait joins key to the round filling up and waits until it is full.
func (b *probeBarrier) wait(ctx context.Context, key string) error {
	b.mu.Lock()
	if len(b.rounds) == 0 || len(b.rounds[len(b.rounds)-1]) == b.size {
		b.rounds = append(b.rounds, nil)
		b.release = make(chan struct{})
	}
	last := len(b.rounds) - 1
	b.rounds[last] = append(b.rounds[last], key)
	release := b.release
	if len(b.rounds[last]) == b.size {
		close(release)
	}
	b.mu.Unlock()
	select {
	case <-release:
		return nil
	case <-b.ctx.Done():
		// Not ctx's error: the store would report a timeout.
		return fmt.Errorf("probe write %s was not one of %d at once before the test's deadline", key, b.size)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestProbeTwoRounds: the probe's PUTs come three at a time, on three
// distinct keys (concurrent conditional writes to one key get 409 from
// AWS), in exactly two rounds on the same three keys: two round trips,
// not four one after another.
func TestProbeTwoRounds(t *testing.T) {
	eachServer(t, func(t *testing.T, e testEnv) {
		// Only a guard against the barrier waiting for ever: a probe
		// making its writes one at a time fails when it ends.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		b := &probeBarrier{ctx: ctx, size: 3}
		cfg := e.config(t, FlavorS3)
		s, err := open(ctx, cfg, b.option())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cleanPrefix(t, cfg) })
		defer s.Close() //nolint:errcheck // only drops idle connections; it never fails
		<-s.probeDone
		if s.probeErr != nil {
			t.Fatalf("probe: %v", s.probeErr)
		}
		if got, want := s.Capabilities(), (store.Capabilities{CreateIfAbsent: true, CompareAndSwap: true}); got != want {
			t.Errorf("Capabilities = %+v, want %+v", got, want)
		}
		b.mu.Lock()
		defer b.mu.Unlock()
		if len(b.rounds) != 2 {
			t.Fatalf("probe PUTs in %d rounds of %d, want 2: %q", len(b.rounds), b.size, b.rounds)
		}
		for i, r := range b.rounds {
			keys := slices.Sorted(slices.Values(r))
			if len(slices.Compact(keys)) != b.size {
				t.Errorf("round %d writes keys %q, want %d distinct ones", i+1, r, b.size)
			}
			if first := slices.Sorted(slices.Values(b.rounds[0])); !slices.Equal(keys, first) {
				t.Errorf("round %d writes keys %q, round 1 %q: want the same", i+1, keys, first)
			}
		}
	})
}

// TestProbeVerdict: the probe reads its second round's answers as the
// sequential probe read its answers, which waited for each before sending
// the next: an answer that one would not have waited for changes nothing.
func TestProbeVerdict(t *testing.T) {
	errOther := errors.New("connection reset")
	notImpl := &smithy.GenericAPIError{Code: "NotImplemented"}
	mismatch, exists := store.ErrVersionMismatch, store.ErrExists
	both := store.Capabilities{CreateIfAbsent: true, CompareAndSwap: true}
	cia := store.Capabilities{CreateIfAbsent: true}
	cas := store.Capabilities{CompareAndSwap: true}
	cases := []struct {
		name                 string
		absent, wrong, right error
		version              string
		want                 store.Capabilities
		wantErr              error // nil: no error
	}{
		{"HonoursBoth", exists, mismatch, nil, `"v"`, both, nil},
		{"IgnoresIfNoneMatch", nil, mismatch, nil, `"v"`, cas, nil},
		{"IfNoneMatchNotImplemented", notImpl, mismatch, nil, `"v"`, cas, nil},
		{"IgnoresIfMatch", exists, nil, nil, `"v"`, cia, nil},
		{"IgnoresBoth", nil, nil, nil, `"v"`, store.Capabilities{}, nil},
		{"IfMatchNotImplemented", exists, notImpl, notImpl, `"v"`, cia, nil},
		{"NoETag", exists, mismatch, nil, "", cia, nil},
		{"RightETagRefused", exists, mismatch, mismatch, `"v"`, cia, nil},
		{"RightETagNotImplemented", exists, mismatch, notImpl, `"v"`, cia, nil},
		{"CreateFails", errOther, mismatch, nil, `"v"`, store.Capabilities{}, errOther},
		{"CreateFailsBeforeSwapFails", errOther, errOther, errOther, `"v"`, store.Capabilities{}, errOther},
		{"WrongSwapFails", exists, errOther, nil, `"v"`, cia, errOther},
		{"RightSwapFails", exists, mismatch, errOther, `"v"`, cia, errOther},
		// The sequential probe stopped at the accepted wrong ETag.
		{"RightSwapIgnoredAfterWrongAccepted", exists, nil, errOther, `"v"`, cia, nil},
		{"RightSwapIgnoredAfterNotImplemented", nil, notImpl, errOther, `"v"`, store.Capabilities{}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := probeVerdict(c.absent, c.wrong, c.right, c.version)
			if c.wantErr == nil && err != nil || c.wantErr != nil && !errors.Is(err, c.wantErr) {
				t.Fatalf("probeVerdict error = %v, want %v", err, c.wantErr)
			}
			if got != c.want {
				t.Errorf("probeVerdict = %+v, want %+v", got, c.want)
			}
		})
	}
}
