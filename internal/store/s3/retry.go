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

	"github.com/cloudstic/cloudstic/internal/store"
)

// briefRetryTimeout bounds the retries of the requests made with
// briefRetries (see Config.RetryTimeout).
const briefRetryTimeout = 2 * time.Second

// errRetryTimeout is the retryer's refusal of a retry past the request's
// retry timeout; the retry budget middleware replaces it (and the SDK's
// joining of it with the attempt's error) with retryState.gaveUp.
var errRetryTimeout = errors.New("retry timeout reached")

// retryBackoff returns the rule that times the retries of cfg's requests
// (cfg with its defaults): nominal waits that double from
// Config.RetryBackoff up to MaxRetryWait, each wait drawn between half of
// it and it, within Config.RetryTimeout (negative: no retries).
func retryBackoff(cfg Config) store.Backoff {
	return store.Backoff{First: cfg.RetryBackoff, Max: MaxRetryWait, Budget: cfg.RetryTimeout}
}

// maxAttempts returns a bound on the attempts of a request that the time
// budget of b reaches first: one more than the attempts whose shortest
// waits, even with attempts that take no time, fit in the budget. It is
// what the SDK's retry loop counts; the budget is what ends it.
func maxAttempts(b store.Backoff) int {
	n := b.MaxRetries()
	if n < 0 {
		return 0 // unbounded (the SDK's 0): only the budget ends them
	}
	return n + 2
}

// newRetryer returns the store's SDK retryer (see retryer).
func newRetryer(b store.Backoff, logf func(string, ...any)) *retryer {
	std := retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = maxAttempts(b)
		o.RateLimiter = ratelimit.None
		// A server that did not answer within the deadline is down or
		// hung: retrying would multiply the wait before the command
		// fails.
		o.Retryables = append([]retry.IsErrorRetryable{retry.IsErrorRetryableFunc(noRetryOnTimeout)}, o.Retryables...)
	})
	return &retryer{RetryerV2: std, backoff: b, logf: logf}
}

// retryer is the store's SDK retryer. The standard retryer it wraps says
// which failures are retried (connection errors, 5xx answers, throttling;
// never a timeout: noRetryOnTimeout); retryer times the retries with the
// store's store.Backoff and ends them when the request's time budget is
// spent rather than after a number of attempts, and logs each one. The
// budget, and the wait drawn for each retry, are kept per request in a
// retryState, which the retry budget middleware (addRetryBudget) puts in
// the context of the SDK's retry loop.
type retryer struct {
	aws.RetryerV2
	backoff store.Backoff
	logf    func(format string, args ...any)
}

// MaxAttempts returns maxAttempts: the time budget, not this count, ends
// the retries.
func (r *retryer) MaxAttempts() int { return maxAttempts(r.backoff) }

// RetryDelay returns the wait before retry attempt (1 for the first): the
// one GetRetryToken drew, announced and kept in the request's retryState,
// which the attempt's error leads to (attemptError: the SDK gives
// RetryDelay the error GetRetryToken had, but not the context). An error
// that leads to none (no retry budget middleware) gets a wait of its own.
func (r *retryer) RetryDelay(attempt int, opErr error) (time.Duration, error) {
	var ae *attemptError
	if errors.As(opErr, &ae) && ae.rs.retries == attempt {
		return ae.rs.wait, nil
	}
	wait, _ := r.backoff.Wait(attempt, 0)
	return wait, nil
}

// GetRetryToken is what the SDK's retry loop asks just before each retry,
// with the context of the request: it draws the wait before the retry and
// refuses the retry (errRetryTimeout) when that wait would end past the
// request's budget, and otherwise logs the attempt's error and the wait.
func (r *retryer) GetRetryToken(ctx context.Context, opErr error) (func(error) error, error) {
	if rs, ok := ctx.Value(retryStateKey{}).(*retryState); ok {
		logf := r.logf
		if rs.logf != nil {
			logf = rs.logf
		}
		if err := rs.next(awsmiddleware.GetOperationName(ctx), opErr, logf); err != nil {
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

// retryState is one request's retries: its time budget, the retries
// granted so far and the wait drawn for the last. It is used by one
// goroutine, the request's retry loop.
type retryState struct {
	// start is when the first attempt began. The SDK waits on the real
	// clock, so the budget is measured on it too.
	start time.Time
	// backoff is the store's rule, its Budget lowered to
	// briefRetryTimeout for briefRetries.
	backoff store.Backoff
	retries int
	// wait is the wait drawn for retry number retries, which RetryDelay
	// returns.
	wait time.Duration
	// gaveUp, set when a retry was refused, is the request's error: the
	// last attempt's, with how long it was tried when it was retried.
	gaveUp error
	// logf, when set, gets this request's retry lines instead of the
	// retryer's receiver (Config.Notef): a brief request's go to the
	// request log only (see retryBudget).
	logf func(format string, args ...any)
}

// next decides on retry n of a request whose attempt n failed with err,
// as retryer.GetRetryToken, and logs it. The wait is drawn here, once per
// retry, and kept for RetryDelay: the wait logged is the one taken.
func (rs *retryState) next(op string, err error, logf func(string, ...any)) error {
	var ae *attemptError
	if errors.As(err, &ae) && error(ae) == err {
		err = ae.err
	}
	rs.retries++
	n := rs.retries
	elapsed := time.Since(rs.start)
	wait, ok := rs.backoff.Wait(n, elapsed)
	if !ok {
		rs.gaveUp = err
		if n > 1 {
			rs.gaveUp = fmt.Errorf("gave up after %d attempts in %v: %w", n, elapsed.Round(time.Millisecond), err)
		}
		if logf != nil && rs.backoff.Budget >= 0 {
			logf("s3: %s attempt %d failed after %v: %v; giving up (retry timeout %v)",
				op, n, elapsed.Round(time.Millisecond), err, rs.backoff.Budget)
		}
		return errRetryTimeout
	}
	rs.wait = wait
	if logf != nil {
		logf("s3: %s attempt %d failed: %v; retrying in %v", op, n, err, wait)
	}
	return nil
}

// attemptError is the error of one attempt of a request, inside the SDK's
// retry loop, with the request's retryState: what leads RetryDelay to the
// wait GetRetryToken drew. It says and wraps err and nothing else, so that
// the retryer's checks (errors.As) see through it.
type attemptError struct {
	err error
	rs  *retryState
}

// Error returns err's message.
func (e *attemptError) Error() string { return e.err.Error() }

// Unwrap returns err.
func (e *attemptError) Unwrap() error { return e.err }

// addRetryBudget adds the retry budget middleware just outside the SDK's
// retry loop (the "Retry" finalize middleware), where it sees a request
// once, whatever its attempts, and the attempt middleware just inside it,
// where it sees each attempt.
func (s *Store) addRetryBudget(stack *middleware.Stack) error {
	if _, ok := stack.Finalize.Get("Retry"); !ok {
		return nil // no retries to bound
	}
	if err := stack.Finalize.Insert(middleware.FinalizeMiddlewareFunc("cloudsticRetryBudget", s.retryBudget),
		"Retry", middleware.Before); err != nil {
		return err
	}
	return stack.Finalize.Insert(middleware.FinalizeMiddlewareFunc("cloudsticRetryAttempt", retryAttempt),
		"Retry", middleware.After)
}

// retryBudget starts a request's retryState, in the context that the
// retry loop passes to the retryer, and fails the request with its gaveUp
// error when the budget refused a retry.
func (s *Store) retryBudget(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (
	middleware.FinalizeOutput, middleware.Metadata, error) {
	rs := &retryState{start: time.Now(), backoff: s.retry}
	if brief, _ := ctx.Value(briefRetriesKey{}).(bool); brief && rs.backoff.Budget >= 0 {
		rs.backoff.Budget = min(rs.backoff.Budget, briefRetryTimeout)
		// Its failure is reported within 2 s, and is usually a wrong
		// endpoint: one error line says it all, so its retries go to the
		// request log (-debug) only.
		rs.logf = func(string, ...any) {}
		if s.logf != nil {
			rs.logf = s.logf
		}
	}
	out, md, err := next.HandleFinalize(context.WithValue(ctx, retryStateKey{}, rs), in)
	var ae *attemptError
	switch {
	case err != nil && rs.gaveUp != nil:
		err = rs.gaveUp
	case errors.As(err, &ae) && error(ae) == err:
		err = ae.err // an attempt's error, not retried: as it came
	}
	return out, md, err
}

// retryAttempt ties the error of an attempt to its request's retryState
// (attemptError), for RetryDelay.
func retryAttempt(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (
	middleware.FinalizeOutput, middleware.Metadata, error) {
	out, md, err := next.HandleFinalize(ctx, in)
	if rs, ok := ctx.Value(retryStateKey{}).(*retryState); ok && err != nil {
		err = &attemptError{err: err, rs: rs}
	}
	return out, md, err
}
