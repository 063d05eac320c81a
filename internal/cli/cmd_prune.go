package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/engine/prune"
	"github.com/cloudstic/cloudstic/internal/frontend"
	"github.com/cloudstic/cloudstic/internal/termtext"
)

// pruneFlags are the flags of prune, shared with forget -prune.
type pruneFlags struct {
	maxUnused string
	margin    time.Duration
}

func (p *pruneFlags) register(fs interface {
	StringVar(*string, string, string, string)
	DurationVar(*time.Duration, string, time.Duration, string)
}) {
	fs.StringVar(&p.maxUnused, "max-unused", "30%", "repack a pack when more than this share of it is unused")
	fs.DurationVar(&p.margin, "margin", prune.DefaultMargin, "never delete a pack no index names if the store wrote it less than this long before prune began (default derived from the lock: TTL + safety margin + clock tolerance; indexed packs no snapshot uses go at once)")
}

// options validates the flags.
func (p *pruneFlags) options() (prune.Options, error) {
	s := strings.TrimSuffix(strings.TrimSpace(p.maxUnused), "%")
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || v > 100 {
		return prune.Options{}, usageErr("-max-unused %q: want a percentage from 0%% to 100%%", p.maxUnused)
	}
	if p.margin < 0 {
		return prune.Options{}, usageErr("-margin must not be negative")
	}
	return prune.Options{MaxUnused: v / 100, Margin: p.margin}, nil
}

func runPrune(ctx context.Context, a *app, args []string) error {
	fs := a.flags()
	var pf pruneFlags
	pf.register(fs)
	dryRun := fs.Bool("dry-run", false, "print what would be deleted and the space it would reclaim; change nothing")
	if err := a.parseNoArgs(fs, args); err != nil {
		return err
	}
	opts, err := pf.options()
	if err != nil {
		return err
	}
	opts.DryRun = *dryRun
	r, err := a.openRepo(ctx)
	if err != nil {
		return err
	}
	defer a.closeStore()
	res, err := a.prune(ctx, r, opts)
	if res != nil {
		a.printPrune(res)
	}
	return err
}

// prune runs prune with progress reporting: without a lock on a dry run,
// else under the exclusive lock (the operation layer takes it).
func (a *app) prune(ctx context.Context, r *operation.Repo, opts prune.Options) (*prune.Result, error) {
	rep, endProgress := a.reporter()
	defer endProgress()
	defer a.pruneReporting(rep)(&opts)()
	return operation.Prune(ctx, r, opts)
}

// pruneReporting is the begin function of a prune step: its progress
// events when rep is set, else its log lines unless -quiet or -json.
func (a *app) pruneReporting(rep *operation.Reporter) func(*prune.Options) (end func()) {
	return func(opts *prune.Options) func() {
		if rep != nil {
			return rep.Prune(opts)
		}
		if !a.g.quiet && !a.g.json {
			opts.Logf = a.infof
		}
		return func() {}
	}
}

func (a *app) printPrune(res *prune.Result) {
	if a.g.json {
		a.writeJSON(newPruneDoc(res))
		return
	}
	w := a.io.Stdout
	if a.g.verbose {
		for _, k := range res.WouldDelete {
			fmt.Fprintf(w, "would delete %s\n", termtext.Safe(k))
		}
	}
	// Cloudstic's lines first (scripts read "Objects deleted:" and
	// "Space reclaimed:"); an object is a pack or an index file.
	scanned := res.PacksScanned + res.IndexFilesScanned
	if res.DryRun {
		fmt.Fprintln(w, "Prune dry run complete.")
		fmt.Fprintf(w, "  Objects scanned:       %d\n", scanned)
		fmt.Fprintf(w, "  Objects would delete:  %d\n", objectsDeleted(res))
		fmt.Fprintf(w, "  Space would reclaim:   %s\n", frontend.HumanBytes(res.BytesReclaimed))
	} else {
		fmt.Fprintln(w, "Prune complete.")
		fmt.Fprintf(w, "  Objects scanned:  %d\n", scanned)
		fmt.Fprintf(w, "  Objects deleted:  %d\n", objectsDeleted(res))
		fmt.Fprintf(w, "  Space reclaimed:  %s\n", frontend.HumanBytes(res.BytesReclaimed))
	}
	verb, verbIdx := "deleted", "deleted"
	if res.DryRun {
		verb, verbIdx = "would delete", "would delete"
	}
	fmt.Fprintf(w, "Scanned:     %d snapshots, %d used blobs, %d packs, %d index files\n", res.Snapshots, res.BlobsUsed, res.PacksScanned, res.IndexFilesScanned)
	unindexed := ""
	if res.UnindexedPacksDeleted > 0 {
		unindexed = fmt.Sprintf(" (%d of them unindexed, older than the %s margin)", res.UnindexedPacksDeleted, shortDuration(res.Kept.MarginSeconds))
	}
	fmt.Fprintf(w, "Packs:       %s %d unused%s, repacked %d into %d new\n", verb, res.PacksDeleted, unindexed, res.PacksRepacked, res.PacksWritten)
	printKept(w, res.Kept, res.DryRun)
	fmt.Fprintf(w, "Index:       %d files written, %s %d\n", res.IndexFilesWritten, verbIdx, res.IndexFilesDeleted)
	if res.DryRun {
		fmt.Fprintf(w, "Would reclaim about %s (run with -verbose to list the %d objects)\n", frontend.HumanBytes(res.BytesReclaimed), len(res.WouldDelete))
		return
	}
	fmt.Fprintf(w, "Reclaimed:   %s (%s deleted, %s rewritten)\n", frontend.HumanBytes(res.BytesReclaimed), frontend.HumanBytes(res.BytesDeleted), frontend.HumanBytes(res.BytesWritten))
	if res.TempFilesRemoved > 0 {
		fmt.Fprintf(w, "Temp files:  %d left by crashed writers removed\n", res.TempFilesRemoved)
	}
}

// printKept says what prune left on purpose and why, one line per reason.
func printKept(w io.Writer, k prune.Kept, dryRun bool) {
	label := "Kept:       "
	if dryRun {
		label = "Would keep: "
	}
	if k.UnindexedPacks > 0 {
		fmt.Fprintf(w, "%s %d unindexed %s (%s) younger than the %s margin: a backup may still be writing them (see -margin)\n",
			label, k.UnindexedPacks, packWord(k.UnindexedPacks), frontend.HumanBytes(k.UnindexedBytes), shortDuration(k.MarginSeconds))
	}
	if k.PartlyUsedPacks > 0 {
		fmt.Fprintf(w, "%s %s unused in %d partly used %s, each under the %g%% repack threshold (see -max-unused)\n",
			label, frontend.HumanBytes(k.UnusedBytes), k.PartlyUsedPacks, packWord(k.PartlyUsedPacks), k.MaxUnused*100)
	}
}

// packWord is "pack" or "packs" as n asks.
func packWord(n int) string {
	if n == 1 {
		return "pack"
	}
	return "packs"
}

// shortDuration prints seconds as a duration without trailing zero units:
// 3600 → "1h", 5400 → "1h30m", 90 → "1m30s".
func shortDuration(seconds float64) string {
	s := (time.Duration(seconds * float64(time.Second))).Round(time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
