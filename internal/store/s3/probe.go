package s3

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"

	"github.com/cloudstic/cloudstic/internal/store"
)

// wrongETag is the If-Match value of the probe's swap that must be refused:
// a made-up ETag, not the MD5 of the probe key's content.
const wrongETag = `"0123456789abcdef0123456789abcdef"`

// probe finds out whether the server honours If-None-Match: * and
// If-Match: <ETag> on PutObject. Some S3-compatible servers ignore the
// headers and overwrite: declaring a capability the server does not honour
// would break the lock.
//
// It makes two rounds of three concurrent PUTs, on three fresh keys
// probe/<random hex>-a, -b and -c (one key per check, as AWS answers
// concurrent conditional writes to one key with 409 Conflict): round 1
// creates them with If-None-Match: *; round 2 creates a again (must be
// refused), swaps b with a wrong ETag (must be refused) and c with the ETag
// its creation returned (must succeed). The answers are then read in the
// order of the earlier, sequential probe (see probeVerdict): the verdicts
// and errors are that probe's, in two round trips instead of four.
//
// cleanup, when not nil, deletes the probe keys that were created: the
// caller runs it once it has published the result, so that nothing waits
// for the deletions.
func (s *Store) probe(ctx context.Context) (caps store.Capabilities, cleanup func(), err error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return caps, nil, err
	}
	base := "probe/" + hex.EncodeToString(b)
	keys := []string{base + "-a", base + "-b", base + "-c"}

	created := make([]store.ObjectInfo, len(keys))
	errs := inParallel(len(keys), func(i int) (err error) {
		created[i], err = s.put(ctx, keys[i], []byte("probe 1"), store.PutOptions{IfAbsent: true})
		return err
	})
	var exist []string
	for i, err := range errs {
		if err == nil {
			exist = append(exist, keys[i])
		}
	}
	cleanup = s.probeCleanup(ctx, exist)
	for _, err := range errs {
		if err != nil {
			return caps, cleanup, fmt.Errorf("writing probe key: %w", err)
		}
	}

	// c is a key of its own, so its ETag from round 1 is still its
	// current one whatever a's second create did. (The sequential probe
	// swapped a itself, and had to take the ETag of a second create the
	// server accepted instead of refusing.)
	opts := []store.PutOptions{{IfAbsent: true}, {IfVersion: wrongETag}, {IfVersion: created[2].Version}}
	errs = inParallel(len(keys), func(i int) error {
		_, err := s.put(ctx, keys[i], []byte("probe 2"), opts[i])
		return err
	})
	caps, err = probeVerdict(errs[0], errs[1], errs[2], created[2].Version)
	return caps, cleanup, err
}

// probeVerdict reads the answers of the probe's second round in the order
// the probe used to send them one after another, each sent only if the
// one before it could not settle the verdict: the second create (absent:
// ErrExists), the swap with a wrong ETag (wrong: ErrVersionMismatch), then
// the swap with the right ETag (right: success), whose key was created
// with version. An answer the sequential probe would not have waited for
// is ignored.
func probeVerdict(absent, wrong, right error, version string) (caps store.Capabilities, err error) {
	switch {
	case errors.Is(absent, store.ErrExists):
		caps.CreateIfAbsent = true
	case absent == nil: // the header was ignored and the object replaced
	case !isNotImplemented(absent):
		return caps, fmt.Errorf("create-if-absent probe: %w", absent)
	}
	switch {
	case errors.Is(wrong, store.ErrVersionMismatch):
	case wrong == nil: // a wrong ETag was accepted: no compare-and-swap
		return caps, nil
	case isNotImplemented(wrong):
		return caps, nil
	default:
		return caps, fmt.Errorf("compare-and-swap probe: %w", wrong)
	}
	switch {
	case right == nil:
		caps.CompareAndSwap = version != ""
	case errors.Is(right, store.ErrVersionMismatch) || isNotImplemented(right):
	default:
		return caps, fmt.Errorf("compare-and-swap probe: %w", right)
	}
	return caps, nil
}

// probeCleanup returns the probe's cleanup: it deletes keys at once, or it
// is nil when there are none.
func (s *Store) probeCleanup(ctx context.Context, keys []string) func() {
	if len(keys) == 0 {
		return nil
	}
	return func() {
		// Cleanup failure only leaves a tiny object behind; it must not
		// fail Open, but -debug shows it. A key already gone is no
		// failure. Close waits for it: an outage is not waited out.
		ctx, cancel := context.WithTimeout(briefRetries(context.WithoutCancel(ctx)), abortTimeout)
		defer cancel()
		inParallel(len(keys), func(i int) error {
			err := s.deleteObject(ctx, keys[i], "")
			if err != nil && !errors.Is(err, store.ErrNotFound) && s.logf != nil {
				s.logf("s3: deleting probe key %s: %v", keys[i], err)
			}
			return nil
		})
	}
}

// inParallel runs fn(0) to fn(n-1) at once, waits for all of them and
// returns their errors by index.
func inParallel(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = fn(i) })
	}
	wg.Wait()
	return errs
}
