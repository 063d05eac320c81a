package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/engine/repair"
	"github.com/cloudstic/cloudstic/internal/termtext"
)

// repairSubcommands are the subcommands of `repair`, in help order.
func repairSubcommands() []string { return []string{"snapshots", "index", "config"} }

func runRepair(ctx context.Context, a *app, args []string) error {
	fs := a.flags()
	dryRun := fs.Bool("dry-run", false, "report what is damaged and what would be done; change nothing")
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageErr("give a subcommand: %s (run 'cloudstic repair -h')", strings.Join(repairSubcommands(), ", "))
	}
	sub := pos[0]
	if sub != "snapshots" && sub != "index" && sub != "config" {
		return usageErr("unknown repair subcommand %q%s: want one of %s", sub, didYouMean(sub, repairSubcommands()), strings.Join(repairSubcommands(), ", "))
	}
	if len(pos) > 1 {
		return usageErr("unexpected argument %q", pos[1])
	}
	r, err := a.openRepo(ctx)
	if err != nil {
		return err
	}
	defer a.closeStore()
	var logf func(string, ...any)
	if !a.g.quiet && !a.g.json {
		logf = a.infof
	}
	switch sub {
	case "config":
		return a.repairConfig(ctx, r, *dryRun)
	case "snapshots":
		res, err := operation.RepairSnapshots(ctx, r, repair.SnapshotsOptions{DryRun: *dryRun, Logf: logf})
		if res != nil {
			a.printRepairSnapshots(res, err)
		}
		return err
	}
	res, err := operation.RepairIndex(ctx, r, repair.IndexOptions{DryRun: *dryRun, Logf: logf})
	if res != nil {
		a.printRepairIndex(res, err)
	}
	return err
}

// repairConfigResult is repair config -json.
type repairConfigResult struct {
	// Bound: the config carries a MAC its key verifies (after the repair,
	// or already before it).
	Bound     bool `json:"bound"`
	DryRun    bool `json:"dry_run"`
	Encrypted bool `json:"encrypted"`
	// Repaired: this run added the MAC.
	Repaired bool `json:"repaired"`
}

// repairConfig adds the MAC to an encrypted repository's config written
// before configs had one (under the exclusive lock; none on a dry run).
func (a *app) repairConfig(ctx context.Context, r *operation.Repo, dryRun bool) error {
	out := repairConfigResult{Bound: r.Reader().ConfigAuthenticated(), DryRun: dryRun, Encrypted: r.Reader().Config().Encrypted}
	var msg string
	switch {
	case !out.Encrypted:
		msg = "Config: the repository is not encrypted: there is no key to bind its config to"
	case out.Bound:
		msg = "Config: already bound to the repository's key; nothing to do"
	case dryRun:
		msg = "Config: not bound to the repository's key (dry run: its MAC would be added)"
	default:
		if err := operation.BindConfig(ctx, r); err != nil {
			return err
		}
		out.Bound, out.Repaired = true, true
		msg = "Config: bound to the repository's key (its MAC was added)"
	}
	if a.g.json {
		a.writeJSON(out)
	} else {
		fmt.Fprintln(a.io.Stdout, msg)
	}
	return nil
}

// repairSnapshotsResult is repair snapshots -json.
type repairSnapshotsResult struct {
	Damaged []repairedSnapshot `json:"damaged"`
	DryRun  bool               `json:"dry_run"`
	Sound   int                `json:"sound"`
}

// repairedSnapshot is one damaged snapshot of repair snapshots -json.
type repairedSnapshot struct {
	Key     string `json:"key"`
	Reason  string `json:"reason"`
	Removed bool   `json:"removed"`
}

func (a *app) printRepairSnapshots(res *repair.SnapshotsResult, runErr error) {
	if a.g.json {
		if runErr == nil {
			out := repairSnapshotsResult{Damaged: []repairedSnapshot{}, DryRun: res.DryRun, Sound: res.Sound}
			for _, d := range res.Damaged {
				out.Damaged = append(out.Damaged, repairedSnapshot{Key: d.Key, Reason: d.Reason(), Removed: d.Removed})
			}
			a.writeJSON(out)
		}
		return
	}
	w := a.io.Stdout
	removed := 0
	for _, d := range res.Damaged {
		verb := "would remove"
		if d.Removed {
			verb = "removed"
			removed++
		}
		fmt.Fprintln(w, termtext.Sprintf("%-12s %s: %s", verb, d.Key, d.Reason()))
	}
	switch {
	case len(res.Damaged) == 0:
		fmt.Fprintf(w, "Snapshots:   %d sound, none damaged\n", res.Sound)
	case res.DryRun:
		fmt.Fprintf(w, "Snapshots:   %d sound, %d damaged (dry run: none removed)\n", res.Sound, len(res.Damaged))
	default:
		fmt.Fprintf(w, "Snapshots:   %d sound, %d damaged, %d removed\n", res.Sound, len(res.Damaged), removed)
	}
}

// repairIndexResult is repair index -json.
type repairIndexResult struct {
	Blobs             int              `json:"blobs"`
	DamagedIndexFiles []damagedJSON    `json:"damaged_index_files"`
	DryRun            bool             `json:"dry_run"`
	IndexFilesRemoved int              `json:"index_files_removed"`
	IndexFilesWritten int              `json:"index_files_written"`
	OldIndexFiles     int              `json:"old_index_files"`
	Packs             int              `json:"packs"`
	PacksIndexed      int              `json:"packs_indexed"`
	StalePacks        int              `json:"stale_packs"`
	UnreadablePacks   []unreadablePack `json:"unreadable_packs"`
}

// unreadablePack is one pack of repair index -json whose header could not
// be read.
type unreadablePack struct {
	EntriesKept int    `json:"entries_kept"`
	Key         string `json:"key"`
	Reason      string `json:"reason"`
}

func (a *app) printRepairIndex(res *repair.IndexResult, runErr error) {
	if a.g.json {
		if runErr == nil {
			out := repairIndexResult{Blobs: res.Blobs, DamagedIndexFiles: damagedList(res.DamagedIndexFiles), DryRun: res.DryRun,
				IndexFilesRemoved: res.IndexFilesRemoved, IndexFilesWritten: res.IndexFilesWritten, OldIndexFiles: res.OldIndexFiles,
				Packs: res.Packs, PacksIndexed: res.PacksIndexed, StalePacks: res.StalePacks, UnreadablePacks: []unreadablePack{}}
			for _, p := range res.UnreadablePacks {
				out.UnreadablePacks = append(out.UnreadablePacks, unreadablePack{EntriesKept: p.EntriesKept, Key: p.Key, Reason: p.Reason()})
			}
			a.writeJSON(out)
		}
		return
	}
	w := a.io.Stdout
	for _, p := range res.UnreadablePacks {
		kept := "its blobs are in no index now"
		if p.EntriesKept > 0 {
			kept = fmt.Sprintf("%d entries kept from an old index file", p.EntriesKept)
		}
		fmt.Fprintln(w, termtext.Sprintf("unreadable   %s: %s: left in place, %s", p.Key, p.Reason(), kept))
	}
	for _, d := range res.DamagedIndexFiles {
		fmt.Fprintln(w, termtext.Sprintf("damaged      %s: %s", d.Key, d.Reason()))
	}
	written, removed := "written", "removed"
	if res.DryRun {
		written, removed = "would be written", "would be removed"
	}
	fmt.Fprintf(w, "Packs:       %d on the store, %d indexed (%d blobs), %d with an unreadable header; %d missing packs dropped from the index\n",
		res.Packs, res.PacksIndexed, res.Blobs, len(res.UnreadablePacks), res.StalePacks)
	fmt.Fprintf(w, "Index:       %d old files (%d damaged); %d new files %s, %d old files %s\n",
		res.OldIndexFiles, len(res.DamagedIndexFiles), res.IndexFilesWritten, written, res.IndexFilesRemoved, removed)
}
