package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/cloudstic/cloudstic/internal/engine/check"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/frontend"
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
	rep, endProgress := a.reporter()
	res, err := operation.Check(ctx, r, opts, rep.Check)
	endProgress()
	if err != nil {
		return err
	}
	return a.printCheck(a.io.Stderr, opts, res)
}

// printCheck prints check's result: the JSON document (on stdout), or the
// counts and every problem found on w (the command line's stderr, where
// Cloudstic prints them; the dashboard's summary). Problems make it fail
// (errReported).
func (a *app) printCheck(w io.Writer, opts check.Options, res *check.Result) error {
	if a.g.json {
		if res.Errors == nil {
			res.Errors = []check.Problem{}
		}
		if res.Notes == nil {
			res.Notes = []check.Problem{}
		}
		a.writeJSON(newCheckDoc(res))
	} else {
		// Cloudstic's summary first: scripts read "Snapshots checked:"
		// and "repository is healthy".
		fmt.Fprintln(w, "Repository check complete.")
		fmt.Fprintf(w, "  Snapshots checked:  %d\n", res.Snapshots)
		fmt.Fprintf(w, "  Objects verified:   %d\n", res.Trees+res.Blobs)
		fmt.Fprintf(w, "  Errors found:       %d\n", len(res.Errors))
		fmt.Fprintf(w, "Checked:     %d snapshots, %d trees, %d referenced blobs\n", res.Snapshots, res.Trees, res.Blobs)
		fmt.Fprintf(w, "Store:       %d packs, %d index files\n", res.Packs, res.IndexFiles)
		if opts.ReadData {
			fmt.Fprintf(w, "Read:        %d packs, %d blobs, %s\n", res.PacksRead, res.BlobsRead, frontend.HumanBytes(res.BytesRead))
		}
		// Problems name store keys, snapshots and paths.
		for _, p := range res.Notes {
			fmt.Fprintln(w, termtext.Safe(p.String()))
		}
		for _, p := range res.Errors {
			fmt.Fprintln(w, termtext.Safe(p.String()))
		}
		if res.OK() {
			fmt.Fprintln(w, "No errors found — repository is healthy.")
		}
	}
	if !res.OK() {
		return fmt.Errorf("%w: %d errors found", errReported, len(res.Errors))
	}
	return nil
}
