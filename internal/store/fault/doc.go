// Package fault is a store.Store wrapper for tests that injects faults at a
// configurable, seeded rate: errors (before an operation, or, for a Put,
// after the write landed, as when a reply is lost), latency (a context-aware
// wait), short reads (fewer bytes plus an error, never silently), and a
// SIGKILL of the whole process before or after the n-th mutating operation
// (Put or Delete), the way a crash stops a command mid-way.
//
// Every injected error wraps ErrInjected. The wrapper never changes the
// bytes that reach the inner store, so a store behind it stays a valid
// store: whatever lands there was written by the inner store's own atomic
// Put.
//
// test/crash's build of the command line (test/crash/faultbin) runs behind
// it when the environment variable named by EnvVar is set; Parse reads that
// variable's value (docs/testing.md). The released binary never does.
package fault
