package tag

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
)

// Sentinel errors.
var (
	// ErrNoChange: none of Add, Remove or Set was given.
	ErrNoChange = errors.New("give at least one of -add, -remove or -set")
	// ErrSetAndEdit: Set replaces all tags and cannot be combined with
	// Add or Remove.
	ErrSetAndEdit = errors.New("-set replaces all tags and cannot be combined with -add or -remove")
	// ErrNoSelection: neither snapshot ids nor a tag filter was given; tag
	// refuses rather than rewrite every snapshot.
	ErrNoSelection = errors.New("give snapshot ids or a -tag filter (tag refuses to change every snapshot)")
	// ErrEmptyTag: a tag to add, remove or set is the empty string.
	ErrEmptyTag = errors.New("a tag cannot be empty")
)

// Options configure a tag run.
type Options struct {
	// Add are tags to add (those already present stay once).
	Add []string
	// Remove are tags to remove.
	Remove []string
	// Set replaces all tags when HasSet (an empty Set removes them all).
	Set    []string
	HasSet bool
	// IDs names the snapshots to change (id prefixes, or "latest").
	IDs []string
	// FilterTags selects, when IDs is empty, the snapshots carrying every
	// one of these tags.
	FilterTags []string
	// DryRun decides but writes and deletes nothing.
	DryRun bool
}

// Validate checks the options before any I/O.
func (o Options) Validate() error {
	if len(o.Add) == 0 && len(o.Remove) == 0 && !o.HasSet {
		return ErrNoChange
	}
	if o.HasSet && (len(o.Add) > 0 || len(o.Remove) > 0) {
		return ErrSetAndEdit
	}
	if len(o.IDs) == 0 && len(o.FilterTags) == 0 {
		return ErrNoSelection
	}
	for _, list := range [][]string{o.Add, o.Remove, o.Set, o.FilterTags} {
		if slices.Contains(list, "") {
			return ErrEmptyTag
		}
	}
	return nil
}

// Apply returns the tags old becomes under the options, and whether they
// differ from old (in content or order).
func (o Options) Apply(old []string) ([]string, bool) {
	var out []string
	base := old
	if o.HasSet {
		base = o.Set
	}
	for _, t := range base {
		if !slices.Contains(out, t) && !slices.Contains(o.Remove, t) {
			out = append(out, t)
		}
	}
	for _, t := range o.Add {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, !slices.Equal(out, old)
}

// Change is one snapshot whose tags change.
type Change struct {
	// Old is the snapshot as it was (its id and tags).
	Old snapshot.WithID
	// NewTags are its tags after the change.
	NewTags []string
	// NewID is the id of the rewritten snapshot; zero in a dry run and
	// when the rewrite failed.
	NewID id.ID
	// OldDeleted: the replaced object is gone.
	OldDeleted bool
}

// Result is the outcome of Run.
type Result struct {
	// Changes are the selected snapshots whose tags change, oldest first.
	Changes []Change
	// Unchanged counts selected snapshots that already had the wanted tags.
	Unchanged int
}

// Plan selects the snapshots of snaps (oldest first) the options name and
// decides their new tags, without any I/O.
func Plan(snaps []snapshot.WithID, opts Options) (*Result, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	selected, err := selectSnapshots(snaps, opts)
	if err != nil {
		return nil, err
	}
	res := &Result{}
	for _, s := range selected {
		tags, changed := opts.Apply(s.Tags)
		if !changed {
			res.Unchanged++
			continue
		}
		res.Changes = append(res.Changes, Change{Old: s, NewTags: tags})
	}
	return res, nil
}

// selectSnapshots returns the snapshots named by id (each once), or those
// matching the tag filter, oldest first.
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
		if len(opts.IDs) > 0 && !want[s.ID] {
			continue
		}
		if hasAll(s.Tags, opts.FilterTags) {
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

// Run loads the snapshots of the repository w writes to, plans, and
// rewrites each changed snapshot: the new object is saved first, then the
// old one is deleted. The lease w writes under (a shared lock or stronger)
// is checked before each new object is saved. On an error the result
// holds what was done so far; a snapshot whose new object was saved but
// whose old one could not be deleted has a NewID and OldDeleted false
// (both objects exist, both restorable). With opts.DryRun, Run is DryRun
// on w's view.
func Run(ctx context.Context, w *repo.Writer, opts Options) (*Result, error) {
	if w == nil {
		return nil, repo.ErrNoLease
	}
	if opts.DryRun {
		return DryRun(ctx, w.Repository, opts)
	}
	snaps, _, err := w.Snapshots(ctx) // damaged ones cannot be retagged: left alone
	if err != nil {
		return nil, err
	}
	res, err := Plan(snaps, opts)
	if err != nil {
		return res, err
	}
	for i := range res.Changes {
		c := &res.Changes[i]
		if err := w.Lease().Check(ctx); err != nil {
			return res, fmt.Errorf("before tagging snapshot %s: %w", c.Old.ID.Short(), err)
		}
		if err := rewrite(ctx, w, c); err != nil {
			return res, err
		}
	}
	return res, nil
}

// DryRun loads r's snapshots and plans what Run would change, with no
// lock, changing nothing.
func DryRun(ctx context.Context, r *repo.Repository, opts Options) (*Result, error) {
	snaps, _, err := r.Snapshots(ctx) // damaged ones cannot be retagged: left alone
	if err != nil {
		return nil, err
	}
	opts.DryRun = true
	return Plan(snaps, opts)
}

// rewrite stores c's snapshot with its new tags, then deletes the old
// object.
func rewrite(ctx context.Context, w *repo.Writer, c *Change) error {
	next := *c.Old.Snapshot
	next.Tags = c.NewTags
	next.Original = c.Old.OriginalID(c.Old.ID)
	nid, err := w.SaveSnapshot(ctx, &next)
	if err != nil {
		return fmt.Errorf("tagging snapshot %s: %w", c.Old.ID.Short(), err)
	}
	c.NewID = nid
	if err := w.DeleteSnapshot(ctx, c.Old.ID); err != nil {
		return fmt.Errorf("snapshot %s was saved with its new tags as %s, but the old one is left: %w",
			c.Old.ID.Short(), nid.Short(), err)
	}
	c.OldDeleted = true
	return nil
}
