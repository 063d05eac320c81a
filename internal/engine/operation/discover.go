package operation

import (
	"context"

	"github.com/cloudstic/cloudstic/internal/source/volume"
)

// SourceMount is one local file system a backup could start from, with
// its mount metadata (source discover, setup workstation).
type SourceMount = volume.Mount

// ErrDiscoverUnsupported means this OS has no way here to list its file
// systems.
var ErrDiscoverUnsupported = volume.ErrDiscoverUnsupported

// DiscoverSources lists this machine's local file systems: pseudo and
// network file systems left out, "/" always in.
func DiscoverSources(ctx context.Context) ([]SourceMount, error) {
	return volume.System{}.Discover(ctx)
}
