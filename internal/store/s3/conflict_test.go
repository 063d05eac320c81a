package s3

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/cloudstic/cloudstic/internal/store"
)

// conflictXML is the body S3 sends when concurrent conditional writes to
// one key collide.
const conflictXML = `<?xml version="1.0" encoding="UTF-8"?>
<Error><Code>ConditionalRequestConflict</Code><Message>A conflicting operation occurred.</Message></Error>`

// injectConflicts is a fault-injecting client option: the first n
// PutObject requests get a fake 409 ConditionalRequestConflict answer
// instead of reaching the server.
func injectConflicts(n int64) func(*s3.Options) {
	var left atomic.Int64
	left.Store(n)
	return func(o *s3.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			return stack.Deserialize.Add(middleware.DeserializeMiddlewareFunc("testConflict",
				func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (
					middleware.DeserializeOutput, middleware.Metadata, error) {
					if awsmiddleware.GetOperationName(ctx) != "PutObject" || left.Add(-1) < 0 {
						return next.HandleDeserialize(ctx, in)
					}
					resp := &http.Response{
						StatusCode:    http.StatusConflict,
						Header:        http.Header{"Content-Type": []string{"application/xml"}},
						Body:          io.NopCloser(strings.NewReader(conflictXML)),
						ContentLength: int64(len(conflictXML)),
					}
					return middleware.DeserializeOutput{RawResponse: &smithyhttp.Response{Response: resp}}, middleware.Metadata{}, nil
				}), middleware.After)
		})
	}
}

func TestConditionalConflictRetried(t *testing.T) {
	eachServer(t, func(t *testing.T, e testEnv) {
		cases := []struct {
			name      string
			conflicts int64
			wantErr   bool
		}{
			{"OneConflict", 1, false},
			{"SeveralConflicts", conflictAttempts - 1, false},
			{"TooMany", conflictAttempts, true},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				cfg := e.config(t, FlavorS3)
				s, err := open(context.Background(), cfg)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cleanPrefix(t, cfg) })
				defer s.Close() //nolint:errcheck // only drops idle connections; it never fails
				// Reopen with the fault injected after the probe, on the
				// same prefix, keeping the probed capabilities.
				faulty, err := open(context.Background(), Config{
					Bucket: cfg.Bucket, Prefix: cfg.Prefix, Endpoint: cfg.Endpoint, Region: cfg.Region,
					AccessKey: cfg.AccessKey, SecretKey: cfg.SecretKey, Flavor: FlavorB2,
				}, injectConflicts(c.conflicts))
				if err != nil {
					t.Fatal(err)
				}
				defer faulty.Close() //nolint:errcheck // only drops idle connections; it never fails
				faulty.caps = s.Capabilities()
				_, err = faulty.Put(context.Background(), "index/lock.exclusive", []byte("x"), store.PutOptions{IfAbsent: true})
				if c.wantErr {
					if !isConditionalConflict(err) || errors.Is(err, store.ErrExists) {
						t.Fatalf("Put after %d conflicts = %v, want a conflict error", c.conflicts, err)
					}
					return
				}
				if err != nil {
					t.Fatalf("Put after %d conflicts: %v", c.conflicts, err)
				}
				if _, err := s.Stat(context.Background(), "index/lock.exclusive"); err != nil {
					t.Fatalf("Stat after the retried write: %v", err)
				}
			})
		}
	})
}
