package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cloudstic/cloudstic/internal/engine/forget"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/engine/prune"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/termtext"
)

func runForget(ctx context.Context, a *app, args []string) error {
	fs := a.flags()
	var p forget.Policy
	fs.IntVar(&p.Last, "keep-last", 0, "keep the N newest snapshots")
	fs.IntVar(&p.Hourly, "keep-hourly", 0, "keep the newest snapshot of each of the last N hours that have one")
	fs.IntVar(&p.Daily, "keep-daily", 0, "keep the newest snapshot of each of the last N days that have one")
	fs.IntVar(&p.Weekly, "keep-weekly", 0, "keep the newest snapshot of each of the last N ISO weeks that have one")
	fs.IntVar(&p.Monthly, "keep-monthly", 0, "keep the newest snapshot of each of the last N months that have one")
	fs.IntVar(&p.Yearly, "keep-yearly", 0, "keep the newest snapshot of each of the last N years that have one")
	var tags multiFlag
	fs.Var(&tags, "tag", "only consider snapshots with this tag (repeatable: all must match)")
	source := fs.String("source", "", "only consider snapshots of this source, e.g. local:/home/me")
	host := fs.String("host", "", "only consider snapshots of this host")
	groupBy := fs.String("group-by", forget.DefaultGroupBy, "apply the policy per group of these fields (source,host,path,tags; empty: one group)")
	doPrune := fs.Bool("prune", false, "run prune afterwards (takes the exclusive lock)")
	dryRun := fs.Bool("dry-run", false, "show what would be removed; remove nothing")
	var pf pruneFlags
	pf.register(fs)
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	gb, err := forget.ParseGroupBy(*groupBy)
	if err != nil {
		return usageErr("%v", err)
	}
	if err := p.Validate(); err != nil {
		return usageErr("%v", err)
	}
	popts, err := pf.options()
	if err != nil {
		return err
	}
	// A cloud drive's URI is compared in the form snapshots record
	// ("gdrive" is "gdrive:/").
	if u, ok, err := parseCloudURI(*source); err != nil {
		return err
	} else if ok {
		*source = u.String()
	}
	opts := forget.Options{IDs: pos, Policy: p, Filter: forget.Filter{Tags: tags, Source: *source, Host: *host},
		GroupBy: gb, DryRun: *dryRun}
	if len(pos) == 0 && p.Empty() {
		return usageErr("%v", forget.ErrNoPolicy)
	}
	if len(pos) > 0 && !p.Empty() {
		return usageErr("%v", forget.ErrIDsAndPolicy)
	}
	r, err := a.openRepo(ctx)
	if err != nil {
		return err
	}
	defer a.closeStore()
	var pruneOpts *prune.Options
	if *doPrune {
		pruneOpts = &popts
	}
	rep, endProgress := a.reporter()
	res, pres, err := operation.Forget(ctx, r, opts, pruneOpts, a.pruneReporting(rep))
	endProgress()
	if res == nil {
		return err
	}
	if a.g.json {
		a.writeJSON(a.forgetDoc(res, *dryRun, pres, err))
	} else {
		a.printForget(res, *dryRun, pres)
	}
	return forgetErr(res, err)
}

// forgetErr is the error of a forget whose result was printed: when its
// snapshots were removed but the prune step after it failed (a lock held
// elsewhere, Ctrl-C), it says both, without a second JSON document.
func forgetErr(res *forget.Result, err error) error {
	switch {
	case !errors.Is(err, operation.ErrPruneAfterForget):
		return err
	case errors.Is(err, context.Canceled) && !errors.Is(err, lock.ErrLeaseLost):
		return &exitCodeError{code: ExitError, msg: fmt.Sprintf("removed %d snapshots, but the prune after it was interrupted; 'cloudstic prune' reclaims their space", len(res.Removed))}
	}
	return &exitCodeError{code: ExitError, msg: fmt.Sprintf("removed %d snapshots, but %v", len(res.Removed), err)}
}

type forgetJSONSnap struct {
	ID      string   `json:"id"`
	Time    string   `json:"time"`
	Reasons []string `json:"reasons"`
}

// forgetDoc is forget -json's document: the groups, what was removed,
// and the prune step's result or error.
func (a *app) forgetDoc(res *forget.Result, dryRun bool, pres *prune.Result, err error) forgetResult {
	conv := func(ds []forget.Decision) []forgetJSONSnap {
		out := []forgetJSONSnap{}
		for _, d := range ds {
			out = append(out, forgetJSONSnap{ID: d.ID.String(), Time: d.Time.Format("2006-01-02T15:04:05Z07:00"), Reasons: nonNil(d.Reasons)})
		}
		return out
	}
	groups := []forgetGroup{}
	for _, g := range res.Groups {
		groups = append(groups, forgetGroup{Key: g.Key, Keep: conv(g.Keep), Remove: conv(g.Remove)})
	}
	removed := []string{}
	for _, sid := range res.Removed {
		removed = append(removed, sid.String())
	}
	out := forgetResult{skippedDamage: a.skipped(), DryRun: dryRun, Groups: groups, Removed: removed, Prune: pres}
	if errors.Is(err, operation.ErrPruneAfterForget) {
		_, out.PruneError = errorCode(err)
	}
	return out
}

// printForget prints forget's human summary, and prune's after it.
func (a *app) printForget(res *forget.Result, dryRun bool, pres *prune.Result) {
	w := a.io.Stdout
	total := 0
	for _, g := range res.Groups {
		fmt.Fprintf(w, "%s: keep %d, remove %d\n", termtext.Safe(g.Key.String()), len(g.Keep), len(g.Remove))
		for _, d := range g.Keep {
			fmt.Fprintf(w, "  keep    %s  %s  %s\n", d.ID.String()[:8], d.Time.Local().Format("2006-01-02 15:04:05"), termtext.Safe(strings.Join(d.Reasons, ", ")))
		}
		for _, d := range g.Remove {
			fmt.Fprintf(w, "  remove  %s  %s\n", d.ID.String()[:8], d.Time.Local().Format("2006-01-02 15:04:05"))
			total++
		}
	}
	if dryRun {
		fmt.Fprintf(w, "Dry run: %d snapshots would be removed\n", total)
	} else {
		fmt.Fprintf(w, "Removed %d snapshots\n", len(res.Removed))
	}
	if pres != nil {
		a.printPrune(pres)
	}
}
