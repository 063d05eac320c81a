package cli

import (
	"context"
	"fmt"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/frontend"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/termtext"
)

// diffChange is one line of `diff`.
type diffChange = operation.DiffChange

// diffSummary totals a diff; bytes count regular files only.
type diffSummary = operation.DiffSummary

func runDiff(ctx context.Context, a *app, args []string) error {
	fs := a.flags()
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 1 || len(pos) > 2 {
		return usageErr("give one or two snapshots: diff SNAP1 [SNAP2|latest] (one snapshot is compared with its parent)")
	}
	r, err := a.openRepo(ctx)
	if err != nil {
		return err
	}
	defer a.closeStore()
	var s1, s2 snapshot.WithID
	var changes []diffChange
	err = operation.Diff(ctx, r, operation.NoLock, func(snaps []snapshot.WithID) (snapshot.WithID, snapshot.WithID, error) {
		var err error
		s1, s2, err = diffSnapshots(snaps, pos)
		return s1, s2, err
	}, func(c diffChange) { changes = append(changes, c) })
	if err != nil {
		return err
	}
	sum := operation.SummarizeDiff(changes)
	if a.g.json {
		a.writeJSON(diffResult{skippedDamage: a.skipped(), Snapshot1: s1.ID.String(), Snapshot2: s2.ID.String(),
			Changes: nonNilChanges(changes), Summary: sum, Ref1: s1.ID.String(), Ref2: s2.ID.String(), CSChanges: diffCSChanges(changes)})
		return nil
	}
	// Cloudstic's lines: a header, then "A|M|D path" (a change of
	// metadata only is an M too; -json tells them apart).
	fmt.Fprintf(a.io.Stdout, "Diffing %s vs %s\n", s1.ID.String(), s2.ID.String())
	for _, c := range changes {
		fmt.Fprintf(a.io.Stdout, "%s %s\n", diffLetter(c.Change), termtext.Safe(c.Path))
	}
	// Our summary goes to stderr: a script reading Cloudstic's lines
	// counts every line of stdout after the header as a change.
	a.infof("%s -> %s: %d added, %d removed, %d modified, %d metadata only; +%s -%s",
		s1.ID.String()[:8], s2.ID.String()[:8], sum.Added, sum.Removed, sum.Modified, sum.Metadata,
		frontend.HumanBytes(sum.BytesAdded), frontend.HumanBytes(sum.BytesRemoved))
	return nil
}

// diffSnapshots resolves the command's arguments: two snapshots, or one
// and its parent.
func diffSnapshots(snaps []snapshot.WithID, args []string) (snapshot.WithID, snapshot.WithID, error) {
	s1, err := repo.FindSnapshot(snaps, args[0], nil)
	if err != nil {
		return s1, s1, err
	}
	if len(args) == 2 {
		s2, err := repo.FindSnapshot(snaps, args[1], nil)
		return s1, s2, err
	}
	if s1.Parent.IsZero() {
		return s1, s1, usageErr("snapshot %s has no parent: give a second snapshot to compare with", s1.ID.String()[:8])
	}
	for _, s := range snaps {
		if s.ID == s1.Parent {
			return s, s1, nil
		}
	}
	return s1, s1, fmt.Errorf("the parent %s of snapshot %s no longer exists: give a second snapshot to compare with",
		s1.Parent.String()[:8], s1.ID.String()[:8])
}

func nonNilChanges(c []diffChange) []diffChange {
	if c == nil {
		return []diffChange{}
	}
	return c
}
