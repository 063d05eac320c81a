package cli

import (
	"context"
	"fmt"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/engine/rewrite"
	"github.com/cloudstic/cloudstic/internal/frontend"
	"github.com/cloudstic/cloudstic/internal/termtext"
)

func runRewrite(ctx context.Context, a *app, args []string) error {
	fs := a.flags()
	var excludes, files, tags, hosts multiFlag
	fs.Var(&excludes, "exclude", "remove what this gitignore-style pattern matches, as backup's -exclude: secret.txt, /.aws/ (at the snapshot root), *.pem (repeatable)")
	fs.Var(&files, "exclude-file", "read patterns from this file, in gitignore syntax (repeatable)")
	fs.Var(&tags, "tag", "rewrite only the snapshots with this tag (repeatable: all must match)")
	fs.Var(&hosts, "host", "rewrite only the snapshots of this host (repeatable: any may match)")
	dryRun := fs.Bool("dry-run", false, "show what would be removed; change nothing")
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	patterns, err := excludePatterns(excludes, files)
	if err != nil {
		return err
	}
	opts := rewrite.Options{Excludes: patterns, IDs: pos, Tags: tags, Hosts: hosts, DryRun: *dryRun}
	if err := opts.Validate(); err != nil {
		return usageErr("%v", err)
	}
	r, err := a.openRepo(ctx)
	if err != nil {
		return err
	}
	defer a.closeStore()
	res, err := operation.Rewrite(ctx, r, opts)
	if res != nil {
		a.printRewrite(res, *dryRun, err)
	}
	return err
}

func (a *app) printRewrite(res *rewrite.Result, dryRun bool, runErr error) {
	if a.g.json {
		if runErr == nil {
			out := rewriteJSON(res, dryRun)
			out.skippedDamage = a.skipped()
			a.writeJSON(out)
		}
		return
	}
	w := a.io.Stdout
	done := 0
	for _, c := range res.Changes {
		what := fmt.Sprintf("%d entries (%d files, %s)", len(c.Removed), c.RemovedFiles, frontend.HumanBytes(c.RemovedBytes))
		switch {
		case dryRun:
			fmt.Fprintf(w, "would remove from %s %s:\n", c.Old.ID.Short(), what)
		case !c.NewID.IsZero():
			fmt.Fprintf(w, "%s -> %s  removed %s\n", c.Old.ID.Short(), c.NewID.Short(), what)
			if c.OldDeleted {
				done++
			}
		default:
			continue
		}
		if dryRun || a.g.verbose {
			for _, p := range c.Removed {
				fmt.Fprintf(w, "  %s\n", termtext.Safe(p))
			}
		}
	}
	if dryRun {
		fmt.Fprintf(w, "Dry run: %d snapshots would be rewritten, %d have nothing to remove\n", len(res.Changes), res.Unchanged)
		return
	}
	fmt.Fprintf(w, "Rewrote %d snapshots, %d had nothing to remove\n", done, res.Unchanged)
	if done > 0 {
		fmt.Fprintln(w, "The removed files' data stays in the store until 'cloudstic prune -max-unused 0' deletes it")
	}
}

// rewriteJSON builds rewrite -json's document.
func rewriteJSON(res *rewrite.Result, dryRun bool) rewriteResult {
	out := rewriteResult{Changes: []rewriteJSONChange{}, DryRun: dryRun, Unchanged: res.Unchanged}
	for _, c := range res.Changes {
		j := rewriteJSONChange{OldID: c.Old.ID.String(), OldDeleted: c.OldDeleted, Removed: nonNil(c.Removed),
			RemovedBytes: c.RemovedBytes, RemovedFiles: c.RemovedFiles}
		if !c.NewID.IsZero() {
			j.NewID = c.NewID.String()
		}
		out.Changes = append(out.Changes, j)
	}
	return out
}
