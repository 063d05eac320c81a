package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cloudstic/cloudstic/internal/engine/forget"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/engine/prune"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
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
	fs.Var(&tags, "tag", "only consider snapshots with this tag (repeatable: all must match); without -keep-* rules, remove them")
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
	if len(pos) == 0 && p.Empty() && opts.Filter.Empty() {
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
	case errors.Is(err, context.Canceled) && !errors.Is(err, operation.ErrLeaseLost):
		return &exitCodeError{code: ExitError, msg: fmt.Sprintf("removed %d snapshots, but the prune after it was interrupted; 'cloudstic prune' reclaims their space", len(res.Removed))}
	}
	return &exitCodeError{code: ExitError, msg: fmt.Sprintf("removed %d snapshots, but %v", len(res.Removed), err) + lockHint(err)}
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
	out := forgetResult{skippedDamage: a.skipped(), DryRun: dryRun, Groups: groups, Removed: removed, Prune: newPruneDoc(pres)}
	if errors.Is(err, operation.ErrPruneAfterForget) {
		_, out.PruneError = errorCode(err)
	}
	return out
}

// printForget prints forget's summary in Cloudstic's words (a script
// reads "N snapshots have been removed", "N snapshots would be removed",
// "would remove N snapshots:"), each group's kept and removed snapshots as
// tables, and prune's summary after it. SEQ in these tables numbers the
// group's snapshots, oldest first.
func (a *app) printForget(res *forget.Result, dryRun bool, pres *prune.Result) {
	w := a.io.Stdout
	total := 0
	for _, g := range res.Groups {
		var all []snapshot.WithID
		for _, d := range append(append([]forget.Decision(nil), g.Keep...), g.Remove...) {
			all = append(all, d.WithID)
		}
		snapshot.SortByTime(all)
		seq := seqNumbers(all)
		if !g.Key.IsZero() { // one group of everything needs no heading
			fmt.Fprintf(w, "\nSnapshots for %s:\n", termtext.Safe(g.Key.String()))
		}
		if len(g.Keep) > 0 {
			fmt.Fprintf(w, "\nkeep %d snapshots:\n", len(g.Keep))
			snapshotTable(decisionSnaps(g.Keep), seq, func(i int) string { return strings.Join(g.Keep[i].Reasons, ", ") }).render(w)
		}
		if len(g.Remove) > 0 {
			action := "remove"
			if dryRun {
				action = "would remove"
			}
			fmt.Fprintf(w, "\n%s %d snapshots:\n", action, len(g.Remove))
			snapshotTable(decisionSnaps(g.Remove), seq, nil).render(w)
		}
		total += len(g.Remove)
	}
	fmt.Fprintln(w)
	switch {
	case dryRun:
		fmt.Fprintf(w, "%d snapshots would be removed (dry run)\n", total)
	case len(res.Removed) > 0:
		fmt.Fprintf(w, "%d snapshots have been removed\n", len(res.Removed))
	default:
		fmt.Fprintln(w, "No snapshots to remove")
	}
	if pres != nil {
		a.printPrune(pres)
	}
}

// decisionSnaps is the snapshots of ds, in their order.
func decisionSnaps(ds []forget.Decision) []snapshot.WithID {
	out := make([]snapshot.WithID, len(ds))
	for i, d := range ds {
		out[i] = d.WithID
	}
	return out
}
