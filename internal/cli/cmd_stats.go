package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/frontend"
)

// statsModes are the values of stats -mode, as restic names them.
func statsModes() []string {
	return []string{"restore-size", "files-by-contents", "raw-data", "blobs-per-file"}
}

// growthRow is one snapshot of stats -growth.
type growthRow = operation.GrowthRow

func runStats(ctx context.Context, a *app, args []string) error {
	fs := a.flags()
	mode := fs.String("mode", "restore-size", "what to count: "+strings.Join(statsModes(), ", "))
	growth := fs.Bool("growth", false, "show the repository size after each snapshot, oldest first (a sparkline too on a terminal)")
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if !containsString(statsModes(), *mode) {
		return usageErr("-mode %q: want one of %s%s", *mode, strings.Join(statsModes(), ", "), didYouMean(*mode, statsModes()))
	}
	r, err := a.openRepo(ctx)
	if err != nil {
		return err
	}
	defer a.closeStore()
	if *growth {
		return a.statsGrowth(ctx, r, pos)
	}
	return a.stats(ctx, r, pos, *mode)
}

func (a *app) stats(ctx context.Context, r *operation.Repo, refs []string, mode string) error {
	t, err := operation.Stats(ctx, r, "stats", operation.Refs(refs...))
	if err != nil {
		return err
	}
	if a.g.json {
		a.writeJSON(statsResult{skippedDamage: a.skipped(), Mode: mode, Totals: t, DedupRatio: round2(t.DedupRatio()),
			CompressionRatio: round2(t.CompressionRatio()), SpaceRatio: round2(t.SpaceRatio())})
		return nil
	}
	w := tabwriter.NewWriter(a.io.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "Stats of %d snapshots in %s mode\n", t.Snapshots, mode)
	switch mode {
	case "restore-size":
		fmt.Fprintf(w, "  Files:\t%d\n  Total size:\t%s\n", t.RestoreFiles, frontend.HumanBytes(t.RestoreSize))
	case "files-by-contents":
		fmt.Fprintf(w, "  Distinct files:\t%d\n  Total size:\t%s\n", t.UniqueFiles, frontend.HumanBytes(t.UniqueFilesSize))
	case "raw-data":
		fmt.Fprintf(w, "  Blobs:\t%d (%d data, %d tree)\n  Stored size:\t%s (data %s, trees %s)\n  Uncompressed data:\t%s%s\n",
			t.DataBlobs+t.TreeBlobs, t.DataBlobs, t.TreeBlobs, frontend.HumanBytes(t.StoredSize), frontend.HumanBytes(t.StoredData),
			frontend.HumanBytes(t.StoredTrees), estimated(t.UniqueDataEstimated), frontend.HumanBytes(t.UniqueData))
	case "blobs-per-file":
		avg := 0.0
		if t.UniqueFiles > 0 {
			avg = float64(t.FileBlobs) / float64(t.UniqueFiles)
		}
		fmt.Fprintf(w, "  Distinct files:\t%d\n  Blobs of those files:\t%d\n  Blobs per file:\t%.2f on average, %d at most\n",
			t.UniqueFiles, t.FileBlobs, avg, t.MaxFileBlobs)
	}
	fmt.Fprintf(w, "  Entries:\t%d files, %d dirs, %d symlinks, %d others\n", t.RestoreFiles, t.Dirs, t.Symlinks, t.Others)
	fmt.Fprintf(w, "  Logical size:\t%s; stored: %s\n", frontend.HumanBytes(t.RestoreSize), frontend.HumanBytes(t.StoredSize))
	fmt.Fprintf(w, "  Ratios:\tdeduplication %.2fx, compression %s%.2fx, together %.2fx\n",
		t.DedupRatio(), estimated(t.UniqueDataEstimated), t.CompressionRatio(), t.SpaceRatio())
	if err := w.Flush(); err != nil {
		return err
	}
	if t.MissingBlobs > 0 {
		a.warnf("%d blobs named by the snapshots are not in the index: run 'cloudstic check'", t.MissingBlobs)
	}
	return nil
}

// estimated marks a figure derived from proportions (see stats.Totals).
func estimated(b bool) string {
	if b {
		return "~"
	}
	return ""
}

func round2(f float64) float64 { return float64(int64(f*100+0.5)) / 100 }

func (a *app) statsGrowth(ctx context.Context, r *operation.Repo, refs []string) error {
	rows, err := operation.Growth(ctx, r, "stats", operation.Refs(refs...))
	if err != nil {
		return err
	}
	if a.g.json {
		a.writeJSON(rows)
		return nil
	}
	w := tabwriter.NewWriter(a.io.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "TIME\tID\tFILES\tSIZE\tADDED\tREPOSITORY\t")
	for _, row := range rows {
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\t\n", row.Time.Local().Format("2006-01-02 15:04"), row.SnapshotID[:8],
			row.Files, frontend.HumanBytes(row.Size), frontend.HumanBytes(row.Added), frontend.HumanBytes(row.StoredSize))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if a.stdoutIsTerminal() && len(rows) > 1 {
		writeSparkline(a.io.Stdout, rows)
	}
	return nil
}

// sparkRamp are the ASCII levels of a sparkline, lowest first.
const sparkRamp = "_.-=+*#@"

// writeSparkline draws the repository size after each snapshot as one
// character per snapshot, scaled from the smallest to the largest size.
func writeSparkline(w io.Writer, rows []growthRow) {
	lo, hi := rows[0].StoredSize, rows[0].StoredSize
	for _, r := range rows {
		lo, hi = min(lo, r.StoredSize), max(hi, r.StoredSize)
	}
	fmt.Fprintf(w, "\nrepository size %s  %s to %s\n", sparkline(rows, lo, hi), frontend.HumanBytes(lo), frontend.HumanBytes(hi))
}

func sparkline(rows []growthRow, lo, hi int64) string {
	var b strings.Builder
	for _, r := range rows {
		level := len(sparkRamp) - 1
		if hi > lo {
			level = int(math.Round(float64(r.StoredSize-lo) / float64(hi-lo) * float64(len(sparkRamp)-1)))
		}
		b.WriteByte(sparkRamp[level])
	}
	return b.String()
}
