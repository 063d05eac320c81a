package backup

import (
	"context"
	"errors"

	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/source/local"
)

// ErrRecordedStream: Recorded was asked about a stream, whose snapshot
// names no source directory.
var ErrRecordedStream = errors.New("a stream's snapshot has no source to resolve ahead")

// origin is what a backup records about where its snapshot comes from:
// the source URI, the host name, the path (and paths) and the tags, the
// fields snapshots are grouped by (package forget). opts has its defaults
// filled in.
func (rs roots) origin(opts Options) snapshot.Snapshot {
	return snapshot.Snapshot{Source: rs.root.URI, Hostname: opts.Hostname, Path: rs.root.Path, Paths: rs.paths, Tags: opts.Tags}
}

// Recorded returns the origin a run of opts would record in its snapshot
// (source URI, host name, path, paths and tags; nothing else is set),
// without reading any file: it resolves the source's root as Run does. It
// answers "which group of snapshots does this backup feed" before one
// runs, e.g. to apply a profile's retention policy on its own.
func Recorded(ctx context.Context, opts Options) (*snapshot.Snapshot, error) {
	if opts.Stream != nil {
		return nil, ErrRecordedStream
	}
	if opts.Source == nil {
		opts.Source = local.New()
	}
	rs, err := resolveRoots(ctx, &opts)
	if err != nil {
		return nil, err
	}
	opts.fillDefaults()
	o := rs.origin(opts)
	return &o, nil
}
