package s3

import (
	"context"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// addRequestMiddleware adds the per-attempt accounting and logging
// middleware at the end of the deserialize step, next to the transport, so
// it sees every HTTP attempt (retries included) with its raw response.
func (s *Store) addRequestMiddleware(stack *middleware.Stack) error {
	return stack.Deserialize.Add(middleware.DeserializeMiddlewareFunc("cloudsticRequestLog", s.logRequest), middleware.After)
}

// logRequest counts one HTTP request and its bytes, remembers the answer's
// Date header (serverDate) and, when Logf is set, logs method, path,
// status, duration and sizes.
func (s *Store) logRequest(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (
	middleware.DeserializeOutput, middleware.Metadata, error) {
	start := time.Now()
	out, md, err := next.HandleDeserialize(ctx, in)
	s.requests.Add(1)
	var method, path string
	var up, down int64
	if req, ok := in.Request.(*smithyhttp.Request); ok {
		method, path = req.Method, req.URL.Path
		up = max(req.ContentLength, 0)
	}
	status := 0
	if resp, ok := out.RawResponse.(*smithyhttp.Response); ok {
		status = resp.StatusCode
		down = max(resp.ContentLength, 0)
		// A 5xx may come from a proxy or load balancer in front of the
		// server, whose clock is not the store's: only the server's own
		// answers say what time the store keeps.
		if date, ok := headerDate(resp); ok && status < 500 {
			s.date.observe(date, s.clock.Mono())
		}
	}
	s.bytesUp.Add(up)
	s.bytesDown.Add(down)
	if s.logf != nil {
		op := awsmiddleware.GetOperationName(ctx)
		if err != nil && status == 0 {
			s.logf("s3: %s %s %s error after %v: %v", op, method, path, time.Since(start).Round(time.Millisecond), err)
		} else {
			s.logf("s3: %s %s %s %d %v up=%d down=%d", op, method, path, status,
				time.Since(start).Round(time.Millisecond), up, down)
		}
	}
	return out, md, err
}
