package s3

import (
	"errors"
	"net"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
)

// Sentinel errors returned by Open, wrapped with the bucket or the cause.
var (
	// ErrBucketNotFound means the bucket does not exist.
	ErrBucketNotFound = errors.New("bucket does not exist")
	// ErrAccessDenied means the credentials were rejected or lack permission
	// (wrong access key or secret, or a policy that denies access).
	ErrAccessDenied = errors.New("access denied: check the access key and secret")
)

// httpStatus returns the HTTP status code of a failed request, or 0 when
// err carries no HTTP response (a network error, a cancelled context).
func httpStatus(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// apiCode returns the S3 error code (e.g. "NoSuchKey"), or "".
func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// isNotFound reports whether err means the key (or bucket) does not exist.
func isNotFound(err error) bool {
	switch apiCode(err) {
	case "NoSuchKey", "NotFound", "NoSuchBucket":
		return true
	case "XAdminUserNotFound":
		return false
	}
	return httpStatus(err) == http.StatusNotFound
}

// isPreconditionFailed reports a 412 answer to a conditional request.
func isPreconditionFailed(err error) bool {
	return httpStatus(err) == http.StatusPreconditionFailed || apiCode(err) == "PreconditionFailed"
}

// isConditionalConflict reports a 409 that a retry resolves: the one S3
// returns when concurrent conditional writes to one key collide, and the one
// filesystem-backed servers (versitygw posix) return when a write races the
// removal of the now-empty directory that holds the key: our layout never
// makes a key also a directory, so that 409 can only be this race.
func isConditionalConflict(err error) bool {
	code := apiCode(err)
	return code == "ConditionalRequestConflict" || code == "ExistingObjectIsDirectory"
}

// isAccessDenied reports a rejected signature, unknown key or denied policy.
func isAccessDenied(err error) bool {
	switch apiCode(err) {
	case "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "Forbidden",
		"XAdminUserNotFound": // versitygw's 404 for an unknown access key
		return true
	}
	s := httpStatus(err)
	return s == http.StatusForbidden || s == http.StatusUnauthorized
}

// isNotImplemented reports a server that rejects a request feature (such as
// a conditional header) instead of ignoring it.
func isNotImplemented(err error) bool {
	return httpStatus(err) == http.StatusNotImplemented || apiCode(err) == "NotImplemented"
}

// isTimeout reports a connect or response deadline that expired (a
// net.Error whose Timeout is true), not a cancelled context.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// noRetryOnTimeout tells the SDK's retryer not to retry a timed-out request.
func noRetryOnTimeout(err error) aws.Ternary {
	if isTimeout(err) {
		return aws.FalseTernary
	}
	return aws.UnknownTernary
}
