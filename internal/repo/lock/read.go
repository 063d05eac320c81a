package lock

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/cloudstic/cloudstic/internal/store"
)

// object is a lock object as read from the store.
type object struct {
	key     string
	present bool
	info    store.ObjectInfo // from Stat or List; zero fields when unknown
	data    []byte
	p       payload
	bad     error // decode error: the object counts as held
}

// blocks returns the refusal of a live or unreadable object, nil for an
// absent or stale one; lb is the store's time (lower bound).
func (o object) blocks(lb time.Time, opts Options) error {
	switch {
	case !o.present:
		return nil
	case o.bad == nil && isStale(o.p, o.info.ModTime, lb, opts):
		return nil
	default:
		return heldError(o)
	}
}

// statGet reads key's info, then its content (in that order, so that a
// version used for compare-and-swap never belongs to newer content than the
// content judged). Only ErrNotFound means absent.
func statGet(ctx context.Context, st store.Store, key string, shared bool) (object, error) {
	info, err := st.Stat(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return object{key: key}, nil
	}
	if unreadable(err) {
		return badObject(key, err), nil
	}
	if err != nil {
		return object{}, fmt.Errorf("reading lock %s: %w", key, err)
	}
	o, err := get(ctx, st, key, shared)
	o.info = info
	return o, err
}

// get reads and decodes key without its info, reading at most MaxPayload
// bytes of it.
func get(ctx context.Context, st store.Store, key string, shared bool) (object, error) {
	data, err := st.Get(ctx, key, MaxPayload)
	if errors.Is(err, store.ErrNotFound) {
		return object{key: key}, nil
	}
	if unreadable(err) {
		return badObject(key, err), nil
	}
	if err != nil {
		return object{}, fmt.Errorf("reading lock %s: %w", key, err)
	}
	o := object{key: key, present: true, data: data}
	if isQueued(key) {
		// A queue entry is ours alone: its payload tells its kind.
		o.p, _, o.bad = decodePayload(data)
		return o, nil
	}
	o.p, o.bad = decodeKind(data, shared)
	return o, nil
}

// unreadable tells whether err means that a lock object is there but is
// not one to read: larger than any lock (store.ErrTooLarge), or not a
// regular file on a file system store (store.ErrNotRegular). Such an
// object is a bad lock: it counts as held, and break-lock removes it.
func unreadable(err error) bool {
	return errors.Is(err, store.ErrTooLarge) || errors.Is(err, store.ErrNotRegular)
}

// badObject is the lock object under key that cannot be read (see
// unreadable), with the reason.
func badObject(key string, err error) object {
	return object{key: key, present: true, bad: fmt.Errorf("%w: %w", ErrBadLock, err)}
}

// readPrefix lists the lock objects under prefix (shared keys or intents)
// and reads each but except (our own), in key order, skipping those removed
// meanwhile.
func readPrefix(ctx context.Context, st store.Store, prefix, except string) ([]object, error) {
	var infos []store.ObjectInfo
	err := st.List(ctx, prefix, func(info store.ObjectInfo) error {
		if info.Key != except {
			infos = append(infos, info)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", prefix, err)
	}
	sort.Slice(infos, func(i, j int) bool { return infos[i].Key < infos[j].Key })
	var objs []object
	for _, info := range infos {
		o, err := get(ctx, st, info.Key, prefix == SharedPrefix)
		if err != nil {
			return nil, err
		}
		if o.present {
			o.info = info
			objs = append(objs, o)
		}
	}
	return objs, nil
}

// blocking returns the refusal naming every live or unreadable object
// under prefix other than except, nil when there is none.
func blocking(ctx context.Context, st store.Store, prefix, except string, lb func() time.Time, opts Options) error {
	_, err := scan(ctx, st, prefix, except, lb, opts)
	return err
}

// scan is blocking that also returns the stale objects it read, which an
// exclusive holder removes (see sweep).
func scan(ctx context.Context, st store.Store, prefix, except string, lb func() time.Time, opts Options) ([]object, error) {
	objs, err := readPrefix(ctx, st, prefix, except)
	if err != nil {
		return nil, err
	}
	var stale []object
	var refusals []error
	for _, o := range objs {
		if err := o.blocks(lb(), opts); err != nil {
			refusals = append(refusals, err)
		} else {
			stale = append(stale, o)
		}
	}
	return stale, joinRefusals(refusals...)
}

// exclusiveBlocks looks at the exclusive key: one Get, plus a Stat only when
// the payload's expires_at has passed by the store's clock (to learn when
// it was last written). except is our own content, never blocking.
func exclusiveBlocks(ctx context.Context, st store.Store, except []byte, lb func() time.Time, opts Options) error {
	o, err := get(ctx, st, ExclusiveKey, false)
	if err != nil || !o.present || (except != nil && bytes.Equal(o.data, except)) {
		return err
	}
	if o.bad == nil && lb().After(o.p.ExpiresAt) {
		info, err := st.Stat(ctx, ExclusiveKey)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading lock %s: %w", ExclusiveKey, err)
		}
		o.info = info
	}
	return o.blocks(lb(), opts)
}

// deleteIfSame deletes key if it still holds data (used to clear a stale
// exclusive lock on stores without compare-and-swap; only an intent holder
// does this, so no other intent-aware process races with it).
// It reports whether it deleted it.
func deleteIfSame(ctx context.Context, st store.Store, key string, data []byte) (bool, error) {
	cur, err := st.Get(ctx, key, MaxPayload)
	if errors.Is(err, store.ErrNotFound) || unreadable(err) {
		return false, nil // gone, or now something else than data
	}
	if err != nil {
		return false, fmt.Errorf("reading lock %s: %w", key, err)
	}
	if !bytes.Equal(cur, data) {
		return false, nil // changed meanwhile: the caller looks again
	}
	err = st.Delete(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("removing stale lock %s: %w", key, err)
	}
	return true, nil
}
