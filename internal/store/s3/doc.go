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
package s3
