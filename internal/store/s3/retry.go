package s3

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go/middleware"
)

// briefRetryTimeout bounds the retries of the requests made with
// briefRetries (see Config.RetryTimeout).
const briefRetryTimeout = 2 * time.Second

// errRetryTimeout is the retryer's refusal of a retry past the request's
// retry timeout; the retry budget middleware replaces it (and the SDK's
// joining of it with the attempt's error) with retryState.gaveUp.
var errRetryTimeout = errors.New("retry timeout reached")

// retryPolicy times the retries of a request.
type retryPolicy struct {
	// backoff is the first wait (Config.RetryBackoff), timeout the
	// budget (Config.RetryTimeout; negative: no retries).
	backoff, timeout time.Duration
}

// wait returns the wait before retry n (1 for the first): backoff,
// doubled for each retry before it, at most MaxRetryWait.
func (p retryPolicy) wait(n int) time.Duration {
	w := p.backoff
	for i := 1; i < n && w < MaxRetryWait; i++ {
		w *= 2
	}
	return min(w, MaxRetryWait)
}

// maxAttempts returns a bound on the attempts of a request that the time
// budget reaches first: one more than the attempts whose waits, even with
// attempts that take no time, fit in the budget. It is what the SDK's
// retry loop counts; the budget is what ends it.
func (p retryPolicy) maxAttempts() int {
	n := 0
	for total := p.wait(1); p.timeout >= 0 && total <= p.timeout; total += p.wait(n + 1) {
		n++
	}
	return n + 2
}

// newRetryer returns the store's SDK retryer (see retryer).
func newRetryer(p retryPolicy, logf func(string, ...any)) *retryer {
	std := retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = p.maxAttempts()
		o.RateLimiter = ratelimit.None
		// A server that did not answer within the deadline is down or
		// hung: retrying would multiply the wait before the command
		// fails.
		o.Retryables = append([]retry.IsErrorRetryable{retry.IsErrorRetryableFunc(noRetryOnTimeout)}, o.Retryables...)
	})
	return &retryer{RetryerV2: std, policy: p, logf: logf}
}

// retryer is the store's SDK retryer. The standard retryer it wraps says
// which failures are retried (connection errors, 5xx answers, throttling;
// never a timeout: noRetryOnTimeout); retryer times the retries with
// retryPolicy and ends them when the request's time budget is spent
// rather than after a number of attempts, and logs each one. The budget
// is kept per request in a retryState, which the retry budget middleware
// (addRetryBudget) puts in the context of the SDK's retry loop.
type retryer struct {
	aws.RetryerV2
	policy retryPolicy
	logf   func(format string, args ...any)
}

// MaxAttempts returns retryPolicy.maxAttempts: the time budget, not this
// count, ends the retries.
func (r *retryer) MaxAttempts() int { return r.policy.maxAttempts() }

// RetryDelay returns the wait before retry attempt (1 for the first), the
// one GetRetryToken announced.
func (r *retryer) RetryDelay(attempt int, _ error) (time.Duration, error) {
	return r.policy.wait(attempt), nil
}

// GetRetryToken is what the SDK's retry loop asks just before each retry,
// with the context of the request: it refuses the retry (errRetryTimeout)
// when the wait before it would end past the request's budget, and
// otherwise logs the attempt's error and the wait.
func (r *retryer) GetRetryToken(ctx context.Context, opErr error) (func(error) error, error) {
	if rs, ok := ctx.Value(retryStateKey{}).(*retryState); ok {
		if err := rs.next(awsmiddleware.GetOperationName(ctx), opErr, r.policy, r.logf); err != nil {
			return nil, err
		}
	}
	return r.RetryerV2.GetRetryToken(ctx, opErr)
}

// retryStateKey is the context key of a request's retryState.
type retryStateKey struct{}

// briefRetriesKey marks a context whose requests retry for at most
// briefRetryTimeout.
type briefRetriesKey struct{}

// briefRetries returns ctx, its requests retried for at most
// briefRetryTimeout (less if Config.RetryTimeout is less): for a request
// whose failure is better reported soon than waited out.
func briefRetries(ctx context.Context) context.Context {
	return context.WithValue(ctx, briefRetriesKey{}, true)
}

// retryState is one request's retries: its time budget and the retries
// granted so far. It is used by one goroutine, the request's retry loop.
type retryState struct {
	// start is when the first attempt began. The SDK waits on the real
	// clock, so the budget is measured on it too.
	start time.Time
	// timeout is the budget (retryPolicy.timeout, or briefRetryTimeout).
	timeout time.Duration
	retries int
	// gaveUp, set when a retry was refused, is the request's error: the
	// last attempt's, with how long it was tried when it was retried.
	gaveUp error
}

// next decides on retry n of a request whose attempt n failed with err,
// as retryer.GetRetryToken, and logs it.
func (rs *retryState) next(op string, err error, p retryPolicy, logf func(string, ...any)) error {
	rs.retries++
	n := rs.retries
	elapsed := time.Since(rs.start)
	wait := p.wait(n)
	if rs.timeout < 0 || elapsed+wait > rs.timeout {
		rs.gaveUp = err
		if n > 1 {
			rs.gaveUp = fmt.Errorf("gave up after %d attempts in %v: %w", n, elapsed.Round(time.Millisecond), err)
		}
		if logf != nil && rs.timeout >= 0 {
			logf("s3: %s attempt %d failed after %v: %v; giving up (retry timeout %v)",
				op, n, elapsed.Round(time.Millisecond), err, rs.timeout)
		}
		return errRetryTimeout
	}
	if logf != nil {
		logf("s3: %s attempt %d failed: %v; retrying in %v", op, n, err, wait)
	}
	return nil
}

// addRetryBudget adds the retry budget middleware just outside the SDK's
// retry loop (the "Retry" finalize middleware), where it sees a request
// once, whatever its attempts.
func (s *Store) addRetryBudget(stack *middleware.Stack) error {
	if _, ok := stack.Finalize.Get("Retry"); !ok {
		return nil // no retries to bound
	}
	return stack.Finalize.Insert(middleware.FinalizeMiddlewareFunc("cloudsticRetryBudget", s.retryBudget),
		"Retry", middleware.Before)
}

// retryBudget starts a request's retryState, in the context that the
// retry loop passes to the retryer, and fails the request with its gaveUp
// error when the budget refused a retry.
func (s *Store) retryBudget(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (
	middleware.FinalizeOutput, middleware.Metadata, error) {
	rs := &retryState{start: time.Now(), timeout: s.retry.timeout}
	if brief, _ := ctx.Value(briefRetriesKey{}).(bool); brief && rs.timeout >= 0 {
		rs.timeout = min(rs.timeout, briefRetryTimeout)
	}
	out, md, err := next.HandleFinalize(context.WithValue(ctx, retryStateKey{}, rs), in)
	if err != nil && rs.gaveUp != nil {
		err = rs.gaveUp
	}
	return out, md, err
}
