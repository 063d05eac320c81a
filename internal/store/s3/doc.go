// Package s3 implements store.Store on Amazon S3 and S3-compatible object
// stores (versitygw, MinIO, R2, ...) with aws-sdk-go-v2, and on Backblaze B2
// through B2's S3-compatible API (Flavor B2).
//
// Keys are stored under Config.Prefix + "/" + key in one bucket. An object's
// Version is its ETag exactly as the server returns it (quoted). Conditional
// writes map to If-None-Match: * (create-if-absent) and If-Match: <ETag>
// (compare-and-swap); Open starts a probe of whether the server honours them
// (writes wait for it) and declares store.Capabilities accordingly; Config.ConditionalWrites can
// declare fewer (create-only, none) for servers that accept the headers
// without honouring them under concurrency. B2 has no conditional writes and
// keeps old versions of overwritten objects, so for Flavor B2 both
// capabilities are false and deleting a lock key removes every version.
//
// A request that fails in a way that may pass (a connection refused, reset
// or closed, a 5xx answer, throttling) is sent again by the SDK's retry
// loop, after waits that double from Config.RetryBackoff up to
// MaxRetryWait, each drawn at random between half of it and it (jitter:
// hosts that met the same outage do not all come back at once; see
// store.Backoff), until Config.RetryTimeout after its first attempt (30 s
// by default), so that a server restarting or a network gone for a few
// seconds does not fail the command; Config.Notef (else Logf) gets a line for each
// retry, and ctx ending ends a wait at once. Open's bucket check and the
// cleanups after a failure retry for 2 s only. A request that timed out
// (Config.ConnectTimeout, Config.ResponseTimeout) is never retried: a
// silent server fails the command within the deadline. A conditional
// write is retried like any other request: when an attempt whose answer
// was lost had been applied, the retry is refused (store.ErrExists,
// store.ErrVersionMismatch) as a write that lost a race would be.
package s3
