package check

import (
	"context"

	"github.com/cloudstic/cloudstic/internal/repo"
)

// checkConfig verifies that the config is bound to the repository's key
// (see docs/format.md, "Threat model"): an encrypted repository's config
// must pass its MAC; one written before configs had a MAC gets a note
// saying how to bind it. Unencrypted configs beside key slots never get
// this far: the open refuses them.
func (c *checker) checkConfig(ctx context.Context) {
	authenticated, err := c.r.VerifyStoredConfig(ctx)
	switch {
	case err != nil:
		c.addErr(repo.ConfigKey, err, "%v", err)
	case c.r.Config().Encrypted && !authenticated:
		c.add(KindNote, repo.ConfigKey, "the config carries no MAC (it was written before configs were authenticated), so a change by a store writer without the key would go unnoticed: 'cloudstic repair config' adds it")
	}
}
