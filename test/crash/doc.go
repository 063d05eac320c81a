// Package crash holds crash-consistency tests of the cloudstic command:
// TestMain builds the binary once, from faultbin (cloudstic with the
// test-only fault switch on), and the tests run it as a subprocess against
// a local repository, killing it with SIGKILL after seeded random delays
// and at chosen store writes (CLOUDSTIC_TEST_FAULTS, see docs/testing.md),
// interrupting it with SIGINT,
// running it with injected store errors, latency and short reads, and
// racing backups against prunes. After each, `check -read-data` must pass,
// every snapshot that existed before must restore byte for byte, and the
// next backup must succeed.
//
// Seeds are logged; rerun one with CLOUDSTIC_CRASH_SEED=N.
package crash
