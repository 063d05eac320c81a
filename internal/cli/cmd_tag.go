package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/engine/tag"
)

// setTagsFlag is tag's repeatable -set: it records that it was given, so
// that -set "" (remove every tag) differs from no -set.
type setTagsFlag struct {
	tags  []string
	given bool
}

func (f *setTagsFlag) String() string { return strings.Join(f.tags, ",") }

func (f *setTagsFlag) Set(v string) error {
	f.given = true
	if v != "" {
		f.tags = append(f.tags, v)
	}
	return nil
}

func runTag(ctx context.Context, a *app, args []string) error {
	fs := a.flags()
	var add, remove, filter multiFlag
	var set setTagsFlag
	fs.Var(&add, "add", "add this tag (repeatable)")
	fs.Var(&remove, "remove", "remove this tag (repeatable)")
	fs.Var(&set, "set", "replace all tags with these (repeatable; -set \"\" removes every tag)")
	fs.Var(&filter, "tag", "change the snapshots with this tag (repeatable: all must match) instead of naming them")
	dryRun := fs.Bool("dry-run", false, "show what would change; change nothing")
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	opts := tag.Options{Add: add, Remove: remove, Set: set.tags, HasSet: set.given, IDs: pos, FilterTags: filter, DryRun: *dryRun}
	if err := opts.Validate(); err != nil {
		return usageErr("%v", err)
	}
	r, err := a.openRepo(ctx)
	if err != nil {
		return err
	}
	defer a.closeStore()
	res, err := operation.Tag(ctx, r, opts)
	if res != nil {
		a.printTag(res, *dryRun, err)
	}
	return err
}

func (a *app) printTag(res *tag.Result, dryRun bool, runErr error) {
	if a.g.json {
		changes := []tagJSONChange{}
		for _, c := range res.Changes {
			j := tagJSONChange{OldID: c.Old.ID.String(), OldTags: nonNil(c.Old.Tags), NewTags: nonNil(c.NewTags), OldDeleted: c.OldDeleted}
			if !c.NewID.IsZero() {
				j.NewID = c.NewID.String()
			}
			changes = append(changes, j)
		}
		if runErr == nil {
			a.writeJSON(tagResult{skippedDamage: a.skipped(), Changes: changes, DryRun: dryRun, Unchanged: res.Unchanged})
		}
		return
	}
	w := a.io.Stdout
	done := 0
	for _, c := range res.Changes {
		switch {
		case dryRun:
			fmt.Fprintf(w, "would change %s  %s -> %s\n", c.Old.ID.Short(), tagList(c.Old.Tags), tagList(c.NewTags))
		case !c.NewID.IsZero():
			fmt.Fprintf(w, "%s -> %s  %s -> %s\n", c.Old.ID.Short(), c.NewID.Short(), tagList(c.Old.Tags), tagList(c.NewTags))
			if c.OldDeleted {
				done++
			}
		}
	}
	if dryRun {
		fmt.Fprintf(w, "Dry run: %d snapshots would change, %d already have those tags\n", len(res.Changes), res.Unchanged)
	} else {
		fmt.Fprintf(w, "Changed %d snapshots, %d already had those tags\n", done, res.Unchanged)
	}
}

// tagList shows tags for humans: [a, b], or [] for none.
func tagList(tags []string) string { return "[" + tagsText(tags, ", ") + "]" }
