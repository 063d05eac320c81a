package cli

import (
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/cache"
)

// useCache gives a repository in a remote store its local metadata cache
// of index files, snapshots and tree packs, as -no-cache and the
// environment say (see cache.FromEnv). Local stores get none: a copy on the
// same disk saves nothing. A cache that cannot be opened is left out with a
// debug line: it only ever saves downloads.
func (a *app) useCache(r *repo.Repository) {
	if a.g.noCache || isLocal(a.g.store) {
		return
	}
	opts, ok := cache.FromEnv(a.io.Getenv)
	if !ok {
		return
	}
	c, err := cache.Open(opts, r.Config().ID)
	if err != nil {
		a.debugf("metadata cache not used: %v", err)
		return
	}
	r.SetCache(c)
}
