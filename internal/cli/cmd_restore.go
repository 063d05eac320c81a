package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cloudstic/cloudstic/internal/engine/fsmeta"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/engine/restore"
	"github.com/cloudstic/cloudstic/internal/frontend"
	"github.com/cloudstic/cloudstic/internal/termtext"
)

func runRestore(ctx context.Context, a *app, args []string) error {
	fs := a.flags()
	output := fs.String("output", "./restore.zip", "where to restore: a directory, or a .zip file")
	format := fs.String("format", "", "dir or zip (default: zip when -output ends in .zip, else dir)")
	path := fs.String("path", "", "restore only this file, or this directory when it ends in /")
	dryRun := fs.Bool("dry-run", false, "show what would be restored, write nothing")
	var include, exclude multiFlag
	fs.Var(&include, "include", "restore only what this gitignore-style pattern matches (and all below a matching directory), e.g. *.pdf, /home/docs/ (repeatable; last match wins)")
	fs.Var(&exclude, "exclude", "leave out what this gitignore-style pattern matches, e.g. *.tmp, cache/ (repeatable; last match wins)")
	overwrite := fs.String("overwrite", "never", "what to do with existing entries: never (leave them), always (replace), if-changed (replace unless same size and mtime), if-newer (replace if the snapshot's is newer)")
	del := fs.Bool("delete", false, "make each restored directory match the snapshot: remove what the snapshot does not have there (not with -include/-exclude)")
	verify := fs.Bool("verify", false, "read every written file back and check its content against the snapshot")
	sparse := fs.Bool("sparse", true, "leave blocks of zeros as holes (-sparse=false writes them)")
	noSetuid := fs.Bool("no-setuid", false, "restore regular files without their setuid and setgid bits")
	noDevices := fs.Bool("no-devices", false, "create no device nodes (counted at the end; FIFOs are still made)")
	noCaps := fs.Bool("no-capabilities", false, "set no security.capability attribute (file capabilities, as setcap gives)")
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
	opts := restore.Options{Output: *output, Format: *format, Path: *path, DryRun: *dryRun, Warnf: a.warnf,
		Include: include, Exclude: exclude, Overwrite: restore.Overwrite(*overwrite), Delete: *del, Verify: *verify,
		NoSparse: !*sparse, NoSetuid: *noSetuid, NoDevices: *noDevices, NoCapabilities: *noCaps}
	if err := opts.Validate(); err != nil {
		return usageErr("%v", err)
	}
	r, err := a.openRepoAhead(ctx, operation.RestoreLockAhead)
	if err != nil {
		return err
	}
	defer a.closeStore()
	// restore holds a shared lock always, even on a dry run (seed rule): a
	// prune must not delete what we are reading.
	return a.restore(ctx, r, ref, opts)
}

func (a *app) restore(ctx context.Context, r *operation.Repo, ref string, opts restore.Options) error {
	rep, endProgress := a.reporter()
	out, err := operation.Restore(ctx, r, ref, opts, rep.Restore)
	endProgress()
	if out == nil || (err != nil && !errors.Is(err, restore.ErrDamaged) && !errors.Is(err, restore.ErrVerify)) {
		return err
	}
	snap, res := out.Snapshot, out.Result
	if a.g.json {
		a.writeJSON(restoreResult{skippedDamage: a.skipped(), SnapshotID: snap.ID.String(), Output: opts.Output, Format: opts.Format,
			DryRun: opts.DryRun, Files: res.Files, Dirs: res.Dirs, Symlinks: res.Symlinks,
			Hardlinks: res.Hardlinks, Bytes: res.Bytes, Skipped: nonNil(res.Skipped), Damaged: nonNil(res.Damaged),
			Replaced: res.Replaced, Unchanged: res.Unchanged, Deleted: res.Deleted, DeletePaths: res.DeletePaths,
			Verified: res.Verified, VerifyFailed: nonNil(res.VerifyFailed),
			Privileged: privilegeCounts(res.Privileges.Restored), Withheld: privilegeCounts(res.Privileges.Withheld)})
	} else if zipNotWritten := opts.Format == restore.FormatZip && !opts.DryRun && len(res.Damaged) > 0; !zipNotWritten {
		verb := "Restored"
		if opts.DryRun {
			verb = "Would restore"
		}
		fmt.Fprintf(a.io.Stdout, "%s snapshot %s to %s: %d files, %d dirs, %d symlinks, %s\n", verb, snap.ID.String()[:8],
			opts.Output, res.Files, res.Dirs, res.Symlinks, frontend.HumanBytes(res.Bytes))
		printRestoreDetails(a, opts, res)
	}
	if len(res.VerifyFailed) > 0 {
		for _, f := range res.VerifyFailed {
			fmt.Fprintf(a.io.Stderr, "verify failed: %s\n", termtext.Safe(f))
		}
		if len(res.Damaged) == 0 {
			return fmt.Errorf("%d restored files differ from the snapshot when read back (each is listed above); check the disk they were written to", len(res.VerifyFailed))
		}
	}
	if len(res.Damaged) > 0 {
		for _, d := range res.Damaged {
			fmt.Fprintf(a.io.Stderr, "damaged: %s\n", termtext.Safe(d))
		}
		if opts.Format == restore.FormatZip && !opts.DryRun {
			return fmt.Errorf("%d files could not be restored (each is listed above with the reason), so %s was not written; leave them out with -exclude to write the rest. If a reason is damage rather than a read error, run 'cloudstic check'", len(res.Damaged), opts.Output)
		}
		// Everything else was restored: a partial run, exit 3, as a backup
		// that could not read some files. With -json the document above
		// already lists them, so none other is written.
		return &exitCodeError{code: ExitPartial, msg: fmt.Sprintf("%d files could not be restored (each is listed above with the reason); everything else was restored. If a reason is damage rather than a read error, run 'cloudstic check'", len(res.Damaged))}
	}
	return nil
}

// printRestoreDetails prints the counts beyond the summary line that apply.
func printRestoreDetails(a *app, opts restore.Options, res *restore.Result) {
	if len(res.Skipped) > 0 {
		// One line, not one per file: restoring over an earlier restore
		// leaves every file alone. -verbose lists them.
		if a.g.verbose {
			for _, p := range res.Skipped {
				fmt.Fprintf(a.io.Stdout, "left untouched: %s\n", termtext.Safe(p))
			}
			fmt.Fprintf(a.io.Stdout, "%d existing files were left untouched\n", len(res.Skipped))
		} else {
			fmt.Fprintf(a.io.Stdout, "%d existing files were left untouched (-verbose lists them)\n", len(res.Skipped))
		}
	}
	if res.Replaced > 0 || res.Unchanged > 0 {
		fmt.Fprintf(a.io.Stdout, "%d existing entries replaced, %d already matching the snapshot left as they were\n", res.Replaced, res.Unchanged)
	}
	switch {
	case opts.Delete && opts.DryRun:
		for _, p := range res.DeletePaths {
			fmt.Fprintf(a.io.Stdout, "would delete %s\n", termtext.Safe(p))
		}
		fmt.Fprintf(a.io.Stdout, "%d entries not in the snapshot would be deleted\n", res.Deleted)
	case opts.Delete:
		fmt.Fprintf(a.io.Stdout, "%d entries not in the snapshot deleted\n", res.Deleted)
	}
	if opts.Verify {
		fmt.Fprintf(a.io.Stdout, "%d files verified, %d differ\n", res.Verified, len(res.VerifyFailed))
	}
	if line := privilegesLine(res.Privileges); line != "" {
		fmt.Fprintln(a.io.Stdout, line)
	}
}

// privilegesLine says what the restore gave that grants privileges when
// root restored it (setuid and setgid files, device nodes, file
// capabilities), and what -no-setuid, -no-devices and -no-capabilities
// withheld; "" when there was none of either.
func privilegesLine(p fsmeta.Privileges) string {
	count := func(c fsmeta.PrivilegeCounts) string {
		return fmt.Sprintf("%d setuid/setgid files, %d device nodes, %d file capabilities", c.SetuidFiles, c.DeviceNodes, c.Capabilities)
	}
	var parts []string
	if p.Restored.Any() {
		parts = append(parts, "Restored with their privileges: "+count(p.Restored)+" (-no-setuid, -no-devices, -no-capabilities withhold them)")
	}
	if p.Withheld.Any() {
		parts = append(parts, "withheld: "+count(p.Withheld))
	}
	line := strings.Join(parts, "; ")
	if !p.Restored.Any() && line != "" {
		line = strings.ToUpper(line[:1]) + line[1:]
	}
	return line
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
