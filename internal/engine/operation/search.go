package operation

import (
	"context"
	"fmt"

	"github.com/cloudstic/cloudstic/internal/engine/diff"
	"github.com/cloudstic/cloudstic/internal/engine/find"
	"github.com/cloudstic/cloudstic/internal/engine/stats"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
)

// The engine's types the front ends render, re-exported so that they need
// not import the engine packages.
type (
	// FindOptions select what Find reports (find.Options).
	FindOptions = find.Options
	// FindMatch is one entry Find found (find.Match).
	FindMatch = find.Match
	// DiffChange is one path that differs between two snapshots
	// (diff.Change).
	DiffChange = diff.Change
	// DiffSummary totals a diff (diff.Summary).
	DiffSummary = diff.Summary
	// StatsTotals are what Stats counts (stats.Totals).
	StatsTotals = stats.Totals
	// GrowthRow is one snapshot of Growth (stats.GrowthRow).
	GrowthRow = stats.GrowthRow
)

// The kinds of a DiffChange.
const (
	DiffAdded    = diff.Added
	DiffRemoved  = diff.Removed
	DiffModified = diff.Modified
	DiffMetadata = diff.Metadata
)

// ErrBadPattern marks a pattern of Find that is not a valid glob.
var ErrBadPattern = find.ErrBadPattern

// CheckFindPatterns reports the first pattern that is not a valid glob
// (find.CheckPatterns), before any lock is taken.
func CheckFindPatterns(patterns []string) error { return find.CheckPatterns(patterns) }

// SummarizeDiff totals changes (diff.Summarize).
func SummarizeDiff(changes []DiffChange) DiffSummary { return diff.Summarize(changes) }

// Select picks, from all the readable snapshots of a repository (oldest
// first), those a read operation reads, in the order it reads them.
type Select func(all []snapshot.WithID) ([]snapshot.WithID, error)

// Refs selects the snapshots refs name ("latest", ids or prefixes:
// repo.FindSnapshot), in the repository's order (oldest first), each once;
// all of them when refs is empty.
func Refs(refs ...string) Select {
	return func(all []snapshot.WithID) ([]snapshot.WithID, error) {
		if len(refs) == 0 {
			return all, nil
		}
		return pickSnapshots(all, refs)
	}
}

// pickSnapshots resolves snapshot references, keeping the order of snaps
// and dropping repeats.
func pickSnapshots(snaps []snapshot.WithID, refs []string) ([]snapshot.WithID, error) {
	want := map[string]bool{}
	for _, ref := range refs {
		s, err := repo.FindSnapshot(snaps, ref, nil)
		if err != nil {
			return nil, err
		}
		want[s.ID.String()] = true
	}
	var out []snapshot.WithID
	for _, s := range snaps {
		if want[s.ID.String()] {
			out = append(out, s)
		}
	}
	return out, nil
}

// withSelected is withRead for the snapshots sel picks.
func withSelected(ctx context.Context, r *Repo, lk ReadLock, sel Select,
	fn func(ctx context.Context, rr *repo.Repository, all, picked []snapshot.WithID) error) error {
	return withRead(ctx, r, lk, func(ctx context.Context, rr *repo.Repository, all []snapshot.WithID) error {
		picked, err := sel(all)
		if err != nil {
			return err
		}
		return fn(ctx, rr, all, picked)
	})
}

// FindResult is what Find searched.
type FindResult struct {
	// All are the repository's readable snapshots, oldest first; Searched
	// those sel picked, in the order searched.
	All, Searched []snapshot.WithID
	// Entries is the number of entries looked at (find.Stats).
	Entries int
}

// Find searches the snapshots sel picks, in its order, for the entries
// opts select (find.RunStats), calling fn for each as it is found; an
// error from fn stops the search and is returned. The result is nil when
// the snapshots could not be listed or picked.
func Find(ctx context.Context, r *Repo, lk ReadLock, sel Select, opts FindOptions, fn func(FindMatch) error) (*FindResult, error) {
	var out *FindResult
	err := withSelected(ctx, r, lk, sel, func(ctx context.Context, rr *repo.Repository, all, picked []snapshot.WithID) error {
		out = &FindResult{All: all, Searched: picked}
		st, err := find.RunStats(ctx, rr, picked, opts, fn)
		out.Entries = st.Entries
		return err
	})
	return out, err
}

// Diff compares two snapshots (diff.Trees): pick chooses them, from and
// to, from all the readable snapshots (oldest first); fn gets each change
// in path order. A comparison refused by the tree bounds names both
// snapshots.
func Diff(ctx context.Context, r *Repo, lk ReadLock,
	pick func(all []snapshot.WithID) (from, to snapshot.WithID, err error), fn func(DiffChange)) error {
	return withRead(ctx, r, lk, func(ctx context.Context, rr *repo.Repository, all []snapshot.WithID) error {
		s1, s2, err := pick(all)
		if err != nil {
			return err
		}
		err = diff.Trees(ctx, rr, s1.Tree, s2.Tree, "", fn)
		if IsBounds(err) {
			return fmt.Errorf("snapshots %s and %s: %w", s1.ID.Short(), s2.ID.Short(), err)
		}
		return err
	})
}

// Stats counts the snapshots sel picks (stats.Counter).
func Stats(ctx context.Context, r *Repo, lk ReadLock, sel Select) (StatsTotals, error) {
	var t StatsTotals
	err := withSelected(ctx, r, lk, sel, func(ctx context.Context, rr *repo.Repository, _, picked []snapshot.WithID) error {
		c := stats.NewCounter(rr)
		for _, s := range picked {
			if err := c.Add(ctx, s); err != nil {
				return err
			}
		}
		t = c.Totals()
		return nil
	})
	return t, err
}

// Growth returns the repository's size after each snapshot sel picks, in
// its order (stats.Growth).
func Growth(ctx context.Context, r *Repo, lk ReadLock, sel Select) ([]GrowthRow, error) {
	var rows []GrowthRow
	err := withSelected(ctx, r, lk, sel, func(ctx context.Context, rr *repo.Repository, _, picked []snapshot.WithID) error {
		var err error
		rows, err = stats.Growth(ctx, rr, picked)
		return err
	})
	return rows, err
}
