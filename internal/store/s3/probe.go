package s3

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/cloudstic/cloudstic/internal/store"
)

// probe finds out whether the server honours If-None-Match: * and
// If-Match: <ETag> on PutObject, using a fresh key probe/<random hex>.
// Some S3-compatible servers ignore the headers and overwrite: declaring a
// capability the server does not honour would break the lock.
//
// cleanup, when not nil, deletes the probe key: the caller runs it once it
// has published the result, so that nothing waits for the deletion.
func (s *Store) probe(ctx context.Context) (caps store.Capabilities, cleanup func(), err error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return caps, nil, err
	}
	key := "probe/" + hex.EncodeToString(b)
	first, err := s.put(ctx, key, []byte("probe 1"), store.PutOptions{IfAbsent: true})
	if err != nil {
		return caps, nil, fmt.Errorf("writing probe key: %w", err)
	}
	cleanup = func() {
		// Cleanup failure only leaves a tiny object behind; it must not
		// fail Open, but -debug shows it.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
		defer cancel()
		if err := s.deleteObject(ctx, key, ""); err != nil && s.logf != nil {
			s.logf("s3: deleting probe key %s: %v", key, err)
		}
	}

	second, err := s.put(ctx, key, []byte("probe 2"), store.PutOptions{IfAbsent: true})
	switch {
	case errors.Is(err, store.ErrExists):
		caps.CreateIfAbsent = true
	case err == nil:
		first = second // the header was ignored and the object replaced
	case !isNotImplemented(err):
		return caps, cleanup, fmt.Errorf("create-if-absent probe: %w", err)
	}

	_, err = s.put(ctx, key, []byte("probe 3"), store.PutOptions{IfVersion: `"0123456789abcdef0123456789abcdef"`})
	switch {
	case errors.Is(err, store.ErrVersionMismatch):
	case err == nil:
		return caps, cleanup, nil // a wrong ETag was accepted: no compare-and-swap
	case isNotImplemented(err):
		return caps, cleanup, nil
	default:
		return caps, cleanup, fmt.Errorf("compare-and-swap probe: %w", err)
	}
	_, err = s.put(ctx, key, []byte("probe 4"), store.PutOptions{IfVersion: first.Version})
	switch {
	case err == nil:
		caps.CompareAndSwap = first.Version != ""
	case errors.Is(err, store.ErrVersionMismatch) || isNotImplemented(err):
	default:
		return caps, cleanup, fmt.Errorf("compare-and-swap probe: %w", err)
	}
	return caps, cleanup, nil
}
