package lock

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cloudstic/cloudstic/internal/store"
)

// object is a lock object as read from the store.
type object struct {
	present bool
	info    store.ObjectInfo // from Stat or List; zero fields when unknown
	data    []byte
	p       payload
	bad     error // decode error: the object counts as held
}

// isStale: expires_at has passed by our clock and, when the store reported
// the object's modification time, it was last written more than a TTL ago
// (our clock agrees with the store's within MaxClockSkew, checked on every
// write). Both must say so.
func isStale(p payload, modTime, now time.Time, ttl time.Duration) bool {
	if !now.After(p.ExpiresAt) {
		return false
	}
	return modTime.IsZero() || now.Sub(modTime) > ttl
}

// blocks returns the conflict error for a live or unreadable object, nil for
// an absent or stale one.
func (o object) blocks(key string, now time.Time, ttl time.Duration) error {
	switch {
	case !o.present:
		return nil
	case o.bad != nil:
		return badLockError(key, o.bad)
	case isStale(o.p, o.info.ModTime, now, ttl):
		return nil
	default:
		return heldError(o.p)
	}
}

// statGet reads key's info, then its content (in that order, so that a
// version used for compare-and-swap never belongs to newer content than the
// content judged). Only ErrNotFound means absent.
func statGet(ctx context.Context, st store.Store, key string, shared bool) (object, error) {
	info, err := st.Stat(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return object{}, nil
	}
	if err != nil {
		return object{}, fmt.Errorf("reading lock %s: %w", key, err)
	}
	o, err := get(ctx, st, key, shared)
	o.info = info
	return o, err
}

// get reads and decodes key without its info.
func get(ctx context.Context, st store.Store, key string, shared bool) (object, error) {
	data, err := st.Get(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return object{}, nil
	}
	if err != nil {
		return object{}, fmt.Errorf("reading lock %s: %w", key, err)
	}
	o := object{present: true, data: data}
	o.p, o.bad = decodeKind(data, shared)
	return o, nil
}

// exclusiveBlocks is the shared side's look at the exclusive key: one Get,
// plus a Stat only when the payload has expired (to ask the store's clock).
func (a *acquirer) exclusiveBlocks(ctx context.Context) error {
	o, err := get(ctx, a.st, ExclusiveKey, false)
	if err != nil || !o.present {
		return err
	}
	now := a.opts.Clock.Now()
	if o.bad == nil && now.After(o.p.ExpiresAt) {
		info, err := a.st.Stat(ctx, ExclusiveKey)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading lock %s: %w", ExclusiveKey, err)
		}
		o.info = info
	}
	return o.blocks(ExclusiveKey, now, a.opts.TTL)
}

// sharedBlocks is the exclusive side's look at every shared key.
func (a *acquirer) sharedBlocks(ctx context.Context) error {
	objs, err := listShared(ctx, a.st)
	if err != nil {
		return err
	}
	for _, info := range objs {
		o, err := get(ctx, a.st, info.Key, true)
		if err != nil {
			return err
		}
		o.info = info
		if err := o.blocks(info.Key, a.opts.Clock.Now(), a.opts.TTL); err != nil {
			return err
		}
	}
	return nil
}

// listShared returns the info of every shared lock key.
func listShared(ctx context.Context, st store.Store) ([]store.ObjectInfo, error) {
	var objs []store.ObjectInfo
	err := st.List(ctx, SharedPrefix, func(info store.ObjectInfo) error {
		objs = append(objs, info)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing shared locks: %w", err)
	}
	return objs, nil
}

// deleteIfSame deletes key if it still holds data (used to clear a stale
// exclusive lock on stores without compare-and-swap; a small window remains
// between the read and the delete, see docs/lock.md).
func deleteIfSame(ctx context.Context, st store.Store, key string, data []byte) error {
	cur, err := st.Get(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading lock %s: %w", key, err)
	}
	if !bytes.Equal(cur, data) {
		return nil // changed meanwhile: the caller looks again
	}
	if err := st.Delete(ctx, key); err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("removing stale lock %s: %w", key, err)
	}
	return nil
}
