package forget

import (
	"context"
	"errors"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
)

// ReasonNamed marks a snapshot removed because it was named by id.
const ReasonNamed = "named"

// Sentinel errors.
var (
	// ErrNoPolicy: neither snapshot ids, nor a keep rule, nor a filter
	// was given; forget refuses rather than remove every snapshot.
	ErrNoPolicy = errors.New("give snapshot ids, at least one -keep-* rule, or a filter (-tag, -source, -host) that selects the snapshots to remove (forget refuses to remove every snapshot)")
	// ErrIDsAndPolicy: ids and keep rules are exclusive.
	ErrIDsAndPolicy = errors.New("give either snapshot ids or -keep-* rules, not both")
)

// Options configure a forget run.
type Options struct {
	// IDs names snapshots to remove (id prefixes, or "latest").
	IDs []string
	// Policy is used when IDs is empty.
	Policy  Policy
	Filter  Filter
	GroupBy GroupBy
	// Group, when set, limits the policy to the one group with this key
	// (under GroupBy): a profile's retention applies to the group its
	// backup recorded, not to every group the filter lets through (a
	// snapshot of the same source with one more tag is in another group).
	Group *GroupKey
	// Location is the time zone of calendar periods (nil: time.Local).
	Location *time.Location
	// DryRun decides but deletes nothing.
	DryRun bool
}

// GroupResult is what was decided for one group.
type GroupResult struct {
	Key    GroupKey
	Keep   []Decision
	Remove []Decision
}

// Result is the outcome of Plan or Run.
type Result struct {
	Groups []GroupResult
	// Removed lists the snapshots deleted (Run, not a dry run).
	Removed []id.ID
}

// Plan decides, without any I/O, which of snaps to keep and remove.
func Plan(snaps []snapshot.WithID, opts Options) (*Result, error) {
	if len(opts.IDs) > 0 && !opts.Policy.Empty() {
		return nil, ErrIDsAndPolicy
	}
	if len(opts.IDs) > 0 {
		return planIDs(snaps, opts.IDs)
	}
	// A filter without keep rules removes what it selects (Cloudstic's
	// "forget -tag T"); nothing at all would remove every snapshot.
	if opts.Policy.Empty() && opts.Filter.Empty() {
		return nil, ErrNoPolicy
	}
	if err := opts.Policy.Validate(); err != nil {
		return nil, err
	}
	loc := opts.Location
	if loc == nil {
		loc = time.Local
	}
	var matched []snapshot.WithID
	for _, s := range snaps {
		if opts.Filter.Match(s.Snapshot) {
			matched = append(matched, s)
		}
	}
	res := &Result{}
	for _, g := range Split(matched, opts.GroupBy) {
		if opts.Group != nil && g.Key.id() != opts.Group.id() {
			continue
		}
		gr := GroupResult{Key: g.Key}
		for _, d := range Apply(g.Snapshots, opts.Policy, loc) {
			if d.Keep {
				gr.Keep = append(gr.Keep, d)
			} else {
				gr.Remove = append(gr.Remove, d)
			}
		}
		res.Groups = append(res.Groups, gr)
	}
	return res, nil
}

func planIDs(snaps []snapshot.WithID, refs []string) (*Result, error) {
	gr := GroupResult{}
	seen := make(map[id.ID]bool)
	for _, ref := range refs {
		s, err := repo.FindSnapshot(snaps, ref, nil)
		if err != nil {
			return nil, err
		}
		if seen[s.ID] {
			continue
		}
		seen[s.ID] = true
		gr.Remove = append(gr.Remove, Decision{WithID: s, Reasons: []string{ReasonNamed}})
	}
	return &Result{Groups: []GroupResult{gr}}, nil
}

// Run loads the repository's snapshots, plans, and deletes the snapshots
// to remove through u, the repository's write that needs no lock (forget
// takes none: see repo.Unlocked). On a deletion error the snapshots
// removed so far are in the result. Damaged snapshots (repo.Snapshots
// skips them) take no part: a retention policy never counts one as kept,
// nor deletes one, and an id names none (repair snapshots removes them, on
// a second proof). With opts.DryRun, Run is DryRun.
func Run(ctx context.Context, u *repo.Unlocked, opts Options) (*Result, error) {
	if opts.DryRun {
		return DryRun(ctx, u.Repository, opts)
	}
	res, err := load(ctx, u.Repository, opts)
	if err != nil {
		return res, err
	}
	for _, g := range res.Groups {
		for _, d := range g.Remove {
			if err := u.DeleteSnapshot(ctx, d.ID); err != nil {
				return res, err
			}
			res.Removed = append(res.Removed, d.ID)
		}
	}
	return res, nil
}

// DryRun loads r's snapshots and plans what Run would remove, deleting
// nothing.
func DryRun(ctx context.Context, r *repo.Repository, opts Options) (*Result, error) {
	opts.DryRun = true
	return load(ctx, r, opts)
}

// load loads r's snapshots and plans.
func load(ctx context.Context, r *repo.Repository, opts Options) (*Result, error) {
	snaps, _, err := r.Snapshots(ctx)
	if err != nil {
		return nil, err
	}
	return Plan(snaps, opts)
}
