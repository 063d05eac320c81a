package repo

import (
	"errors"

	"github.com/cloudstic/cloudstic/internal/repo/crypt"
	"github.com/cloudstic/cloudstic/internal/repo/index"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// IsDamage reports whether err says that stored bytes are wrong (they do not
// authenticate, decode or hash to their name), as opposed to a failure to
// read them at all (network, permissions), which says nothing about the
// repository's health. Commands use it to avoid calling a flaky connection
// "corruption".
func IsDamage(err error) bool {
	for _, damage := range []error{ErrCorrupt, ErrConfigTampered, pack.ErrCorrupt, crypt.ErrAuth, index.ErrCorrupt,
		tree.ErrCorrupt, snapshot.ErrCorrupt} {
		if errors.Is(err, damage) {
			return true
		}
	}
	return false
}
