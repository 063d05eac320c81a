package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/source"
	"github.com/cloudstic/cloudstic/internal/sshconn"
	"github.com/cloudstic/cloudstic/internal/termtext"
)

func runBackup(ctx context.Context, a *app, args []string) error {
	fs := a.flags()
	var src sourceFlags
	src.register(fs, a.io.Getenv)
	var tags multiFlag
	fs.Var(&tags, "tag", "tag the snapshot (repeatable)")
	var ex excludeFlags
	ex.register(fs)
	var xf xattrFlags
	xf.register(fs)
	var sf stdinFlags
	sf.register(fs)
	var vf volumeFlag
	vf.register(fs)
	host := fs.String("host", "", "record this host name instead of the machine's (the parent snapshot is looked for under it)")
	when := fs.String("time", "", "record this snapshot time instead of now, to import old data: 2006-01-02 15:04:05 (local time) or RFC 3339")
	ignoreEmpty := fs.Bool("ignore-empty-snapshot", false, "scan and report, but write no snapshot when nothing differs from the previous one")
	dryRun := fs.Bool("dry-run", false, "show what would be stored, store nothing")
	compression := fs.String("compression", "auto",
		"how file contents are compressed: fast (s2), small (zstd: about a quarter smaller on text, 2.5 times the CPU), off, or auto (fast on a local disk, small on remote stores)")
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if done, err := a.profileBackup(ctx, fs); done {
		return err
	}
	comp, err := parseCompression(*compression, isLocal(a.g.store))
	if err != nil {
		return err
	}
	if err := sf.check(a, fs, pos); err != nil {
		return err
	}
	if len(pos) > 0 && !sf.wanted() {
		return usageErr("unexpected argument %q (give the source with -source local:PATH)", pos[0])
	}
	var path string
	var paths []string
	var login *sshconn.Config
	if !sf.wanted() { // a stream has no source directory
		if path, paths, login, err = a.sourcePaths(&src); err != nil {
			return err
		}
	}
	opts := backup.Options{Path: path, Paths: paths, Tags: tags, DryRun: *dryRun, Warnf: a.warnf, Uploaders: uploaders(a),
		Compression: comp, Hostname: *host, IgnoreEmpty: *ignoreEmpty}
	for _, set := range []func(*backup.Options) error{ex.options, xf.options, vf.options} {
		if err := set(&opts); err != nil {
			return err
		}
	}
	if opts.VolumeUUID != "" && login != nil {
		return usageErr("-volume-uuid applies to local sources only, not to %s", strings.Join(src.uris, " "))
	}
	if *host != "" && strings.TrimSpace(*host) == "" {
		return usageErr("-host %q: want a host name", *host)
	}
	if *when != "" {
		if opts.Time, err = parseTime(*when); err != nil {
			return usageErr("-time %q: %v", *when, err)
		}
	}
	if opts.Source, err = openSource(ctx, strings.Join(src.uris, " "), login); err != nil { // one URI when login is set
		return err
	}
	if opts.Source != nil {
		defer opts.Source.Close() //nolint:errcheck // read-only; the backup reported what went wrong
	}
	r, err := a.openRepo(ctx)
	if err != nil {
		return err
	}
	defer a.closeStore()
	if a.g.verbose {
		opts.Verbosef = a.infof
	}
	stop, err := sf.attach(ctx, a, pos, &opts)
	if err != nil {
		return err
	}
	defer stop()
	return a.backup(ctx, r, opts)
}

// parseTime reads -time: RFC 3339, or a date and time (seconds
// optional) or a date alone in the local time zone.
func parseTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{time.DateTime, "2006-01-02 15:04", "2006-01-02T15:04:05", time.DateOnly} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, errors.New("want 2006-01-02 15:04:05, 2006-01-02 or RFC 3339 (2006-01-02T15:04:05Z)")
}

// uploaders is how many packs are uploaded at once. A local disk keeps up
// with one (its fsync of a 16 MiB pack took a median 4 ms here, filling
// it ~50 ms), and each more uploader can hold one more pack in memory; remote
// stores need several requests in flight.
func uploaders(a *app) int {
	if isLocal(a.g.store) {
		return 1
	}
	return max(2, a.g.storeConns/2)
}

// parseCompression reads -compression. auto picks what a backup is usually
// short of: CPU on a local disk, where s2 made a 1 GB backup about a fifth
// faster; bandwidth and paid storage on remote stores, where zstd's
// smaller output is worth its CPU.
func parseCompression(value string, local bool) (pack.Compression, error) {
	switch value {
	case "auto":
		if local {
			return pack.S2, nil
		}
		return pack.Zstd, nil
	case "fast":
		return pack.S2, nil
	case "small":
		return pack.Zstd, nil
	case "off":
		return pack.Off, nil
	}
	return 0, usageErr("-compression %q: want auto, fast, small or off", value)
}

func (a *app) backup(ctx context.Context, r *operation.Repo, opts backup.Options) error {
	res, err := operation.Backup(ctx, r, opts, a.backupProgress)
	if errors.Is(err, backup.ErrSource) && len(opts.Paths) > 0 {
		return fmt.Errorf("cannot back up: %w", err)
	}
	if errors.Is(err, backup.ErrSource) {
		return fmt.Errorf("cannot back up %s: %w", opts.Path, err)
	}
	if errors.Is(err, source.ErrLost) {
		return fmt.Errorf("backup of %s stopped, no snapshot written: %w", opts.Path, err)
	}
	if errors.Is(err, backup.ErrFutureTime) {
		return usageErr("-time: %v", err)
	}
	if err != nil {
		return err
	}
	for _, e := range res.Errors {
		fmt.Fprintln(a.io.Stderr, termtext.Sprintf("error: %v", e))
	}
	s := res.Snapshot.Summary
	if a.g.json {
		out := backupResult{skippedDamage: a.skipped(), Summary: s, DryRun: opts.DryRun, Errors: len(res.Errors)}
		if !opts.DryRun && !res.Unchanged {
			out.SnapshotID = res.ID.String()
		}
		if opts.IgnoreEmpty {
			out.Unchanged = &res.Unchanged
		}
		if res.Parent != nil {
			out.Parent = res.Parent.ID.String()
		}
		a.writeJSON(out)
	} else {
		w := a.io.Stdout
		if a.g.verbose && res.Parent != nil {
			fmt.Fprintf(w, "Parent:      %s (%s)\n", res.Parent.ID.String()[:8], res.Parent.Time.Local().Format("2006-01-02 15:04:05"))
		}
		fmt.Fprintf(w, "Files:       %d new, %d changed, %d unmodified, %d removed\n", s.FilesNew, s.FilesChanged, s.FilesUnmodified, s.FilesRemoved)
		fmt.Fprintf(w, "Dirs:        %d new, %d changed, %d unmodified\n", s.DirsNew, s.DirsChanged, s.DirsUnmodified)
		fmt.Fprintf(w, "Added:       %s in %d blobs (%s read of %s)\n", humanBytes(s.BytesAdded), s.BlobsAdded, humanBytes(s.BytesRead), humanBytes(s.BytesTotal))
		fmt.Fprintf(w, "Duration:    %.1fs\n", s.DurationSeconds)
		switch {
		case res.Unchanged:
			fmt.Fprintf(w, "Nothing changed since snapshot %s: no snapshot written (-ignore-empty-snapshot)\n", res.Parent.ID.String()[:8])
		case opts.DryRun:
			fmt.Fprintln(w, "Dry run: nothing was stored")
		default:
			fmt.Fprintf(w, "Snapshot %s saved\n", res.ID.String()[:8])
		}
	}
	if len(res.Errors) > 0 {
		fmt.Fprintf(a.io.Stderr, "cloudstic backup: %d files or directories could not be read (listed above); the rest was saved\n", len(res.Errors))
		return errPartial
	}
	return nil
}
