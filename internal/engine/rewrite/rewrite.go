package rewrite

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/cloudstic/cloudstic/internal/engine/exclude"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
)

// ErrNoExcludes: no pattern was given, so nothing could be removed.
var ErrNoExcludes = errors.New("give at least one -exclude or -exclude-file pattern")

// Options configure a rewrite.
type Options struct {
	// Excludes are gitignore-syntax lines, matched against paths relative
	// to each snapshot's root, as backup's -exclude.
	Excludes []string
	// IDs name the snapshots to rewrite (id prefixes or "latest"); empty:
	// every snapshot that matches the filters.
	IDs []string
	// Tags selects the snapshots carrying every one of these tags.
	Tags []string
	// Hosts selects the snapshots of one of these hosts.
	Hosts []string
	// DryRun decides what would be removed but writes and deletes nothing.
	DryRun bool
}

// Validate checks the options before any I/O.
func (o Options) Validate() error {
	if len(o.Excludes) == 0 {
		return ErrNoExcludes
	}
	_, err := exclude.NewMatcher(o.Excludes)
	return err
}

// Change is one snapshot some of whose entries are removed.
type Change struct {
	// Old is the snapshot as it was.
	Old snapshot.WithID
	// Removed are the paths removed (relative to the snapshot's root, a
	// directory with a trailing "/"), in tree order.
	Removed []string
	// RemovedFiles and RemovedBytes count the regular files removed
	// (those inside removed directories included) and their sizes.
	RemovedFiles, RemovedBytes int64
	// NewID is the rewritten snapshot's id; zero in a dry run and when
	// the rewrite failed.
	NewID id.ID
	// OldDeleted: the replaced object is gone.
	OldDeleted bool
}

// Result is the outcome of Run.
type Result struct {
	// Changes are the selected snapshots that lose entries, oldest first.
	Changes []Change
	// Unchanged counts the selected snapshots the patterns match nothing in.
	Unchanged int
}

// Run rewrites the snapshots opts selects in the repository wr writes
// to, whose index must be loaded, under wr's lease (a shared lock or
// stronger). For each snapshot that loses entries, its new trees are
// stored and flushed, the lease is checked, the new snapshot object is
// stored, and then the old one is deleted. On an error the result holds
// what was done so far; a change with a NewID and OldDeleted false left
// both snapshots (forget the old one). With opts.DryRun, Run is DryRun on
// wr's view.
func Run(ctx context.Context, wr *repo.Writer, opts Options) (*Result, error) {
	if wr == nil {
		return nil, repo.ErrNoLease
	}
	if opts.DryRun {
		return DryRun(ctx, wr.Repository, opts)
	}
	return run(ctx, wr.Repository, wr, opts)
}

// DryRun is Run changing nothing (opts.DryRun is implied): it reads r,
// with no lock, and says what Run would remove.
func DryRun(ctx context.Context, r *repo.Repository, opts Options) (*Result, error) {
	opts.DryRun = true
	return run(ctx, r, nil, opts)
}

// run is Run reading r, writing through wr (nil on a dry run).
func run(ctx context.Context, r *repo.Repository, wr *repo.Writer, opts Options) (*Result, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	m, err := exclude.NewMatcher(opts.Excludes)
	if err != nil {
		return nil, err
	}
	snaps, _, err := r.Snapshots(ctx) // damaged ones cannot be rewritten: left alone
	if err != nil {
		return nil, err
	}
	selected, err := selectSnapshots(snaps, opts)
	if err != nil {
		return nil, err
	}
	w := newWalker(r, wr, m)
	res := &Result{}
	for _, s := range selected {
		c, err := w.rewrite(ctx, s, opts)
		if err != nil {
			if c != nil {
				res.Changes = append(res.Changes, *c)
			}
			return res, fmt.Errorf("rewriting snapshot %s: %w", s.ID.Short(), err)
		}
		if c == nil {
			res.Unchanged++
			continue
		}
		res.Changes = append(res.Changes, *c)
	}
	return res, nil
}

// selectSnapshots returns the snapshots named by id (each once) that match
// the filters, oldest first.
func selectSnapshots(snaps []snapshot.WithID, opts Options) ([]snapshot.WithID, error) {
	want := make(map[id.ID]bool)
	for _, ref := range opts.IDs {
		s, err := repo.FindSnapshot(snaps, ref, nil)
		if err != nil {
			return nil, err
		}
		want[s.ID] = true
	}
	var out []snapshot.WithID
	for _, s := range snaps {
		switch {
		case len(opts.IDs) > 0 && !want[s.ID]:
		case len(opts.Hosts) > 0 && !slices.Contains(opts.Hosts, s.Hostname):
		case !hasAll(s.Tags, opts.Tags):
		default:
			out = append(out, s)
		}
	}
	return out, nil
}

func hasAll(tags, want []string) bool {
	for _, t := range want {
		if !slices.Contains(tags, t) {
			return false
		}
	}
	return true
}

// newSnapshot is old with its new root tree, recording the original id,
// the patterns and the smaller totals.
func newSnapshot(old snapshot.WithID, root id.ID, c *Change, patterns []string) *snapshot.Snapshot {
	next := *old.Snapshot
	next.Tree = root
	if old.Root != nil {
		meta := *old.Root
		meta.Subtree = root
		next.Root = &meta
	}
	next.Original = old.OriginalID(old.ID)
	ex := snapshot.ExcludeSet{}
	if old.Excludes != nil {
		ex = *old.Excludes
	}
	ex.Patterns = append(slices.Clip(ex.Patterns), patterns...)
	next.Excludes = &ex
	next.Summary.FilesTotal = max(0, next.Summary.FilesTotal-c.RemovedFiles)
	next.Summary.BytesTotal = max(0, next.Summary.BytesTotal-c.RemovedBytes)
	return &next
}
