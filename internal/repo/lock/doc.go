// Package lock implements the repository's distributed reader-writer lock,
// stored in the repository itself under "index/": one exclusive key
// ("index/lock.exclusive", held by prune) and any number of shared keys
// ("index/lock.shared/<time>-<random>", held by backup and restore).
//
// Every lock is a lease: a plain JSON payload with an expiry one TTL ahead,
// rewritten (with compare-and-swap where the store supports it) every
// RefreshInterval. A holder that cannot refresh in time, or whose key was
// broken or taken over, loses the lease: the Lock's Context is cancelled with
// a cause wrapping ErrLeaseLost, so the work stops before anyone else may
// consider the lock stale.
//
// Acquisition is symmetric write-then-check: a shared holder writes its key,
// then re-reads the exclusive key; an exclusive holder writes its key (atomic
// create-if-absent where the store has it), verifies it, then lists the shared
// keys. On a linearizable store at least one of two conflicting acquirers sees
// the other. docs/lock.md explains each step and docs/lock/lock.pml checks the
// protocol with spin.
package lock
