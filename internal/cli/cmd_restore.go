package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/engine/restore"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
)

func runRestore(ctx context.Context, a *app, args []string) error {
	fs := a.flags()
	output := fs.String("output", "./restore.zip", "where to restore: a directory, or a .zip file")
	format := fs.String("format", "", "dir or zip (default: zip when -output ends in .zip, else dir)")
	path := fs.String("path", "", "restore only this file, or this directory when it ends in /")
	dryRun := fs.Bool("dry-run", false, "show what would be restored, write nothing")
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usageErr("give at most one snapshot (got %d)", len(pos))
	}
	ref := "latest"
	if len(pos) == 1 {
		ref = pos[0]
	}
	if *format == "" {
		*format = restore.FormatDir
		if strings.HasSuffix(strings.ToLower(*output), ".zip") {
			*format = restore.FormatZip
		}
	}
	if *format != restore.FormatDir && *format != restore.FormatZip {
		return usageErr("-format %q: want dir or zip", *format)
	}
	r, err := a.openRepo(ctx)
	if err != nil {
		return err
	}
	defer a.closeStore()
	// restore holds a shared lock always, even on a dry run (seed rule): a
	// prune must not delete what we are reading.
	return a.restore(ctx, r, ref, restore.Options{Output: *output, Format: *format, Path: *path, DryRun: *dryRun, Warnf: a.warnf})
}

func (a *app) restore(ctx context.Context, r *operation.Repo, ref string, opts restore.Options) error {
	begin := func(snap snapshot.WithID, opts *restore.Options) func() {
		var files, bytes int64
		if opts.Path == "" {
			files, bytes = snap.Summary.FilesTotal, snap.Summary.BytesTotal
		}
		return a.restoreProgress(opts, files, bytes)
	}
	out, err := operation.Restore(ctx, r, ref, opts, begin)
	if out == nil || (err != nil && !errors.Is(err, restore.ErrDamaged)) {
		return err
	}
	snap, res := out.Snapshot, out.Result
	if a.g.json {
		a.writeJSON(restoreResult{SnapshotID: snap.ID.String(), Output: opts.Output, Format: opts.Format,
			DryRun: opts.DryRun, Files: res.Files, Dirs: res.Dirs, Symlinks: res.Symlinks,
			Hardlinks: res.Hardlinks, Bytes: res.Bytes, Skipped: nonNil(res.Skipped), Damaged: nonNil(res.Damaged)})
	} else {
		verb := "Restored"
		if opts.DryRun {
			verb = "Would restore"
		}
		fmt.Fprintf(a.io.Stdout, "%s snapshot %s to %s: %d files, %d dirs, %d symlinks, %s\n", verb, snap.ID.String()[:8],
			opts.Output, res.Files, res.Dirs, res.Symlinks, humanBytes(res.Bytes))
		if len(res.Skipped) > 0 {
			fmt.Fprintf(a.io.Stdout, "%d existing files were left untouched\n", len(res.Skipped))
		}
	}
	if len(res.Damaged) > 0 {
		for _, d := range res.Damaged {
			fmt.Fprintf(a.io.Stderr, "damaged: %s\n", d)
		}
		return fmt.Errorf("%d files could not be restored (each is listed above with the reason); everything else was restored. If a reason is damage rather than a read error, run 'cloudstic check'", len(res.Damaged))
	}
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
