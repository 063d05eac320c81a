package lock

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cloudstic/cloudstic/internal/store"
)

// excerptLen bounds the bytes of an unreadable lock object shown to users.
const excerptLen = 80

// List describes every lock object in the repository (the `locks` command):
// the exclusive key first, then the intents and the shared keys in key
// order. Staleness is judged by the store's clock; a holder of this host
// whose process is gone is marked Dead. Objects that cannot be parsed are
// listed with Err and Excerpt set.
func List(ctx context.Context, st store.Store, opts Options) ([]Info, error) {
	_, infos, err := listObjects(ctx, st, opts)
	return infos, err
}

// listObjects reads every lock object and describes each.
func listObjects(ctx context.Context, st store.Store, opts Options) ([]object, []Info, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, nil, err
	}
	sclock := newStoreClock(opts.Clock)
	if err := sclock.sample(ctx, st); err != nil {
		return nil, nil, err
	}
	var objs []object
	ex, err := statGet(ctx, st, ExclusiveKey, false)
	if err != nil {
		return nil, nil, err
	}
	if ex.present {
		objs = append(objs, ex)
	}
	for _, prefix := range []string{IntentPrefix, SharedPrefix, QueuePrefix} {
		more, err := readPrefix(ctx, st, prefix, "")
		if err != nil {
			return nil, nil, err
		}
		objs = append(objs, more...)
	}
	obs := newObserver(platformProcesses())
	infos := make([]Info, len(objs))
	for i, o := range objs {
		infos[i] = describe(o, sclock.mustNow(), opts)
		infos[i].Dead = o.bad == nil && !infos[i].Stale && obs.gone(o.p)
	}
	return objs, infos, nil
}

// describe turns an object read from the store into an Info.
func describe(o object, storeNow time.Time, opts Options) Info {
	var info Info
	if o.bad != nil {
		info = Info{Key: o.key, IsShared: o.key != ExclusiveKey && !isIntent(o.key), Err: o.bad}
		if o.data != nil {
			info.Excerpt = excerpt(o.data)
		}
	} else {
		info = infoOf(o.key, o.p, isStale(o.p, o.info.ModTime, storeNow, opts), nil)
		info.Age = storeNow.Sub(o.p.AcquiredAt)
	}
	info.Size, info.ModTime = int64(len(o.data)), o.info.ModTime
	if o.data == nil {
		info.Size = o.info.Size // not read: too large, or not a regular file
	}
	return info
}

// excerpt is the first bytes of data, quoted with Go escapes.
func excerpt(data []byte) string {
	if len(data) > excerptLen {
		return strconv.Quote(string(data[:excerptLen])) + "..."
	}
	return strconv.Quote(string(data))
}

// Break removes lock objects (`break-lock`): all of them, or with staleOnly
// only the parsable ones that are stale by the store's clock (see
// Info.Stale) or whose holder's process is gone (Info.Dead: it writes
// nothing more). It returns what it removed. Removing a live lock makes its
// holder lose its lease at its next refresh or Check, but the holder may
// still write until then.
func Break(ctx context.Context, st store.Store, staleOnly bool, opts Options) ([]Info, error) {
	objs, infos, err := listObjects(ctx, st, opts)
	if err != nil {
		return nil, err
	}
	var removed []Info
	var errs []error
	// Intents first: a prune that is releasing or refreshing (without
	// compare-and-swap) while its lock is broken must not be able to
	// reclaim the exclusive key after a new prune took it (lock.pml).
	sort.SliceStable(infos, func(i, j int) bool { return isIntent(infos[i].Key) && !isIntent(infos[j].Key) })
	sort.SliceStable(objs, func(i, j int) bool { return isIntent(objs[i].key) && !isIntent(objs[j].key) })
	for i, info := range infos {
		if staleOnly && (info.Err != nil || !(info.Stale || info.Dead)) {
			continue
		}
		if staleOnly && info.Key == ExclusiveKey {
			// Another process may have taken the stale (or gone holder's)
			// lock over since we read it: delete it only if unchanged.
			deleted, err := deleteIfSame(ctx, st, ExclusiveKey, objs[i].data)
			if err != nil {
				errs = append(errs, err)
			} else if deleted {
				removed = append(removed, info)
			}
			continue
		}
		err := st.Delete(ctx, info.Key)
		if errors.Is(err, store.ErrNotFound) {
			continue // released meanwhile
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("removing lock %s: %w", info.Key, err))
			continue
		}
		removed = append(removed, info)
	}
	return removed, errors.Join(errs...)
}

// isIntent reports whether key is an exclusive contender's intent.
func isIntent(key string) bool { return strings.HasPrefix(key, IntentPrefix) }

// isQueued reports whether key is a waiting acquirer's queue entry.
func isQueued(key string) bool { return strings.HasPrefix(key, QueuePrefix) }
