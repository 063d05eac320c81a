package cli

import (
	"github.com/cloudstic/cloudstic/internal/repo/cache"
)

// cacheOptions say where the operation layer keeps the local metadata
// cache of a remote repository's index files, snapshots and tree packs, as
// -no-cache and the environment say (see cache.FromEnv); nil: no cache.
func (a *app) cacheOptions() *cache.Options {
	if a.g.noCache {
		return nil
	}
	opts, ok := cache.FromEnv(a.io.Getenv)
	if !ok {
		return nil
	}
	return &opts
}
