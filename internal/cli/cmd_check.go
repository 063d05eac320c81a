package cli

import (
	"context"
	"fmt"

	"github.com/cloudstic/cloudstic/internal/engine/check"
	"github.com/cloudstic/cloudstic/internal/termtext"
)

func runCheck(ctx context.Context, a *app, args []string) error {
	fs := a.flags()
	readData := fs.Bool("read-data", false, "download every pack and verify every blob")
	subset := fs.String("read-data-subset", "", "with -read-data (implied), read only a part: N/M (e.g. 1/10) or a percentage (e.g. 10%)")
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usageErr("give at most one snapshot")
	}
	sub, err := check.ParseSubset(*subset)
	if err != nil {
		return usageErr("-read-data-subset: %v", err)
	}
	opts := check.Options{ReadData: *readData || *subset != "", Subset: sub}
	if len(pos) == 1 {
		opts.Snapshot = pos[0]
	}
	if !a.g.quiet && !a.g.json {
		opts.Logf = a.infof
	}
	r, err := a.openRepo(ctx)
	if err != nil {
		return err
	}
	defer a.closeStore()
	stopProgress := a.checkProgress(&opts)
	res, err := check.Run(ctx, r.Reader(), opts)
	stopProgress()
	if err != nil {
		return err
	}
	if a.g.json {
		if res.Errors == nil {
			res.Errors = []check.Problem{}
		}
		if res.Notes == nil {
			res.Notes = []check.Problem{}
		}
		a.writeJSON(checkResult{OK: res.OK(), Result: res})
	} else {
		w := a.io.Stdout
		fmt.Fprintf(w, "Checked:     %d snapshots, %d trees, %d referenced blobs\n", res.Snapshots, res.Trees, res.Blobs)
		fmt.Fprintf(w, "Store:       %d packs, %d index files\n", res.Packs, res.IndexFiles)
		if opts.ReadData {
			fmt.Fprintf(w, "Read:        %d packs, %d blobs, %s\n", res.PacksRead, res.BlobsRead, humanBytes(res.BytesRead))
		}
		// Problems name store keys, snapshots and paths.
		for _, p := range res.Notes {
			fmt.Fprintln(w, termtext.Safe(p.String()))
		}
		for _, p := range res.Errors {
			fmt.Fprintln(w, termtext.Safe(p.String()))
		}
		if res.OK() {
			fmt.Fprintln(w, "No errors found")
		}
	}
	if !res.OK() {
		return fmt.Errorf("%w: %d errors found", errReported, len(res.Errors))
	}
	return nil
}
