// Package storetest is the conformance suite every store.Store backend
// runs against a real instance of its store (a temp dir, a real S3 server, a
// real SFTP server). It checks the semantics the repository and the lock rely
// on: atomic whole-object writes, "not found" as the only absence, prefix
// listing, and the declared conditional writes under concurrency.
package storetest
