package lock

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/cloudstic/cloudstic/internal/store"
)

// List describes every lock object in the repository (the `locks` command):
// the exclusive key first, then the shared keys in key order. Objects that
// cannot be parsed are listed with Err set.
func List(ctx context.Context, st store.Store, opts Options) ([]Info, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	var infos []Info
	ex, err := statGet(ctx, st, ExclusiveKey, false)
	if err != nil {
		return nil, err
	}
	if ex.present {
		infos = append(infos, describe(ExclusiveKey, ex, opts))
	}
	objs, err := listShared(ctx, st)
	if err != nil {
		return nil, err
	}
	sort.Slice(objs, func(i, j int) bool { return objs[i].Key < objs[j].Key })
	for _, info := range objs {
		o, err := get(ctx, st, info.Key, true)
		if err != nil {
			return nil, err
		}
		if o.present {
			o.info = info
			infos = append(infos, describe(info.Key, o, opts))
		}
	}
	return infos, nil
}

func describe(key string, o object, opts Options) Info {
	if o.bad != nil {
		return Info{Key: key, IsShared: key != ExclusiveKey, Err: o.bad}
	}
	return infoOf(key, o.p, isStale(o.p, o.info.ModTime, opts.Clock.Now(), opts.TTL), nil)
}

// Break removes lock objects (`break-lock`): all of them, or with staleOnly
// only the parsable ones that are stale (see Info.Stale). It returns what it
// removed. Removing a live lock makes its holder lose its lease at its next
// refresh or Check, but the holder may still write until then.
func Break(ctx context.Context, st store.Store, staleOnly bool, opts Options) ([]Info, error) {
	infos, err := List(ctx, st, opts)
	if err != nil {
		return nil, err
	}
	var removed []Info
	var errs []error
	for _, info := range infos {
		if staleOnly && (info.Err != nil || !info.Stale) {
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
