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

// knownDir is where this host remembers the repositories it opened
// encrypted (operation.Options.KnownDir): the cache directory, also with
// -no-cache, since the memory holds no repository data.
func (a *app) knownDir() string {
	dir, _ := cache.DirFromEnv(a.io.Getenv) // "" when there is none: no memory
	return dir
}
