package operation

import (
	"context"

	"github.com/cloudstic/cloudstic/internal/engine/check"
)

// Check verifies the repository (check.Run) on a fresh view of r, whose
// index check reads itself; it takes no lock, as it writes nothing. begin,
// when set, is called with the options right before the engine runs, and
// the function it returns right after (progress reporting).
func Check(ctx context.Context, r *Repo, opts check.Options, begin func(*check.Options) (end func())) (*check.Result, error) {
	if begin != nil {
		defer begin(&opts)()
	}
	return check.Run(ctx, r.Fresh().r, opts)
}
