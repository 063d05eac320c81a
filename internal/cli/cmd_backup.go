package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/frontend"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/source"
	"github.com/cloudstic/cloudstic/internal/sshconn"
	"github.com/cloudstic/cloudstic/internal/termtext"
)

// backupFlags are backup's own flags: what a profile's backup takes from
// the profile (applyProfile) and what every backup takes from the command
// line.
type backupFlags struct {
	src         sourceFlags
	tags        multiFlag
	ex          excludeFlags
	xf          xattrFlags
	sf          stdinFlags
	vf          volumeFlag
	cloud       cloudFlags
	host, when  string
	ignoreEmpty bool
	dryRun      bool
	compression string
	metricsFile string
	checkpoint  time.Duration
}

func (f *backupFlags) register(fs *flag.FlagSet, getenv func(string) string) {
	f.src.register(fs, getenv)
	fs.Var(&f.tags, "tag", "tag the snapshot (repeatable)")
	f.ex.register(fs)
	f.xf.register(fs)
	f.sf.register(fs)
	f.vf.register(fs)
	f.cloud.register(fs, getenv)
	fs.StringVar(&f.host, "host", "", "record this host name instead of the machine's (the parent snapshot is looked for under it)")
	fs.StringVar(&f.when, "time", "", "record this snapshot time instead of now, to import old data: 2006-01-02 15:04:05 (local time) or RFC 3339")
	fs.BoolVar(&f.ignoreEmpty, "ignore-empty-snapshot", false, "scan and report, but write no snapshot when nothing differs from the previous one")
	fs.BoolVar(&f.dryRun, "dry-run", false, "show what would be stored, store nothing")
	fs.StringVar(&f.compression, "compression", "auto",
		"how file contents are compressed: fast (s2), small (zstd: about a quarter smaller on text, 2.5 times the CPU), off, or auto (fast on a local disk, small on remote stores)")
	fs.StringVar(&f.metricsFile, "metrics-file", "", "write the run's Prometheus metrics to this file (node_exporter textfile format), atomically")
	fs.DurationVar(&f.checkpoint, "checkpoint-interval", repo.CheckpointAge,
		"index what was stored at least this often, so that a re-run after a crash or kill -9 reuses it (an interrupted run indexes everything it stored)")
}

func runBackup(ctx context.Context, a *app, args []string) error {
	fs := a.flags()
	var f backupFlags
	f.register(fs, a.io.Getenv)
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if err := f.sf.check(a, fs, pos); err != nil {
		return err
	}
	if profile := a.g.prof.profile != "" || a.g.prof.all; profile && f.sf.wanted() {
		return usageErr("a profile backs up its source, not a stream: give -stdin or -stdin-from-command without -profile or -all-profiles")
	}
	if len(pos) > 0 && !f.sf.wanted() {
		return usageErr("unexpected argument %q (give the source with -source local:PATH)", pos[0])
	}
	if err := f.checkMetricsFile(a.g.prof.all); err != nil {
		return err
	}
	switch {
	case a.g.prof.all:
		return a.backupAllProfiles(ctx, f)
	case a.g.prof.profile != "":
		return a.backupProfile(ctx, f)
	}
	opts, done, err := a.backupOptions(ctx, &f)
	if err != nil {
		return err
	}
	defer done()
	r, err := a.openRepoAhead(ctx, backupLockAhead(opts.DryRun))
	if err != nil {
		return err
	}
	defer a.closeStore()
	stop, err := f.sf.attach(ctx, a, pos, &opts)
	if err != nil {
		return err
	}
	defer stop()
	rep, endProgress := a.reporter()
	start := clock.Real{}.Now()
	res, err := operation.Backup(ctx, r, opts, rep.Backup)
	endProgress()
	metricsErr := a.backupMetrics(f.metricsFile, "", start, res, err)
	return a.metricsOutcome(a.printBackup(opts, res, err), metricsErr)
}

// backupOptions checks backup's flags and turns them into the engine's
// options, for a plain backup and for a profile's alike: -source (or a
// profile's source) is read here, and only here (see sourcePaths). done
// closes the source (an sftp:// connection).
func (a *app) backupOptions(ctx context.Context, f *backupFlags) (opts backup.Options, done func(), err error) {
	done = func() {}
	comp, err := parseCompression(f.compression, isLocal(a.g.repo.URI))
	if err != nil {
		return opts, done, err
	}
	var path string
	var paths []string
	var login *sshconn.Config
	cu, isCloud, err := cloudSource(f)
	if err != nil {
		return opts, done, err
	}
	if isCloud {
		path = cu.path
	} else if !f.sf.wanted() { // a stream has no source directory
		if path, paths, login, err = a.sourcePaths(&f.src); err != nil {
			return opts, done, err
		}
	}
	opts = backup.Options{Path: path, Paths: paths, Tags: f.tags, DryRun: f.dryRun, Warnf: a.warnf, Uploaders: uploaders(a),
		Compression: comp, Hostname: f.host, IgnoreEmpty: f.ignoreEmpty}
	for _, set := range []func(*backup.Options) error{f.ex.options, f.xf.options, f.vf.options} {
		if err := set(&opts); err != nil {
			return opts, done, err
		}
	}
	if opts.VolumeUUID != "" && (login != nil || isCloud) {
		return opts, done, usageErr("-volume-uuid applies to local sources only, not to %s", strings.Join(f.src.uris, " "))
	}
	if f.checkpoint <= 0 {
		return opts, done, usageErr("-checkpoint-interval %v: want a positive duration, e.g. 30s", f.checkpoint)
	}
	opts.CheckpointInterval = f.checkpoint
	if f.host != "" && strings.TrimSpace(f.host) == "" {
		return opts, done, usageErr("-host %q: want a host name", f.host)
	}
	if f.when != "" {
		if opts.Time, err = parseTime(f.when); err != nil {
			return opts, done, usageErr("-time %q: %v", f.when, err)
		}
	}
	if a.g.verbose {
		opts.Verbosef = a.infof
	}
	if isCloud {
		opts.Source, err = a.openCloudSource(ctx, cu, &f.cloud)
	} else {
		opts.Source, err = openSource(ctx, strings.Join(f.src.uris, " "), login) // one URI when login is set
	}
	if err != nil {
		return opts, done, err
	}
	if opts.Source != nil {
		done = func() { opts.Source.Close() } //nolint:errcheck // read-only; the backup reported what went wrong
	}
	return opts, done, nil
}

// cloudSource says whether backup's -source is a cloud drive: one
// gdrive or onedrive URI, without -files-from or a stream. -auth-ref is
// refused with any other source.
func cloudSource(f *backupFlags) (cloudURI, bool, error) {
	var cu cloudURI
	isCloud := false
	for _, uri := range f.src.uris {
		u, ok, err := parseCloudURI(uri)
		if err != nil {
			return cu, false, err
		}
		if ok {
			cu, isCloud = u, true
		}
	}
	switch {
	case isCloud && (len(f.src.uris) > 1 || f.src.from.given() || f.sf.wanted()):
		return cu, false, usageErr("-source %s: a cloud drive is backed up alone (no other -source, -files-from or -stdin)", cu.typ)
	case !isCloud && f.cloud.authRef != "":
		return cu, false, usageErr("-auth-ref applies to gdrive and onedrive sources only")
	}
	return cu, isCloud, nil
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
	if isLocal(a.g.repo.URI) {
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

// printBackup reports a backup's result, or maps its error: the JSON
// document or the human summary on stdout, unreadable files on stderr.
func (a *app) printBackup(opts backup.Options, res *operation.BackupResult, err error) error {
	if err != nil {
		return a.backupErr(opts, err)
	}
	if a.g.json {
		a.writeJSON(a.backupDoc(opts, res))
	}
	return a.backupReport(opts, res)
}

// backupErr says what a failed backup means for the user.
func (a *app) backupErr(opts backup.Options, err error) error {
	switch {
	case errors.Is(err, backup.ErrSource) && len(opts.Paths) > 0:
		return fmt.Errorf("cannot back up: %w", err)
	case errors.Is(err, backup.ErrSource):
		return fmt.Errorf("cannot back up %s: %w", opts.Path, err)
	case errors.Is(err, source.ErrLost):
		return fmt.Errorf("backup of %s stopped, no snapshot written: %w", opts.Path, err)
	case errors.Is(err, backup.ErrFutureTime):
		return usageErr("-time: %v", err)
	}
	return err
}

// backupReport prints the files a backup could not read on stderr and,
// without -json, its summary on stdout; it returns errPartial when there
// were such files.
func (a *app) backupReport(opts backup.Options, res *operation.BackupResult) error {
	for _, e := range res.Errors {
		fmt.Fprintln(a.io.Stderr, termtext.Sprintf("error: %v", e))
	}
	if !a.g.json {
		a.printBackupSummary(opts, res)
	}
	if len(res.Errors) > 0 {
		fmt.Fprintf(a.io.Stderr, "cloudstic backup: %d files or directories could not be read (listed above); the rest was saved\n", len(res.Errors))
		return errPartial
	}
	return nil
}

// backupDoc is backup -json's document of a result.
func (a *app) backupDoc(opts backup.Options, res *operation.BackupResult) backupResult {
	out := backupResult{skippedDamage: a.skipped(), Summary: res.Snapshot.Summary, DryRun: opts.DryRun, Errors: len(res.Errors),
		ErrorPaths: errorPaths(res.Errors)}
	if !opts.DryRun && !res.Unchanged {
		out.SnapshotID = res.ID.String()
	}
	if opts.IgnoreEmpty {
		out.Unchanged = &res.Unchanged
	}
	if res.Parent != nil {
		out.Parent = res.Parent.ID.String()
	}
	return out
}

// errorPaths returns the path each error names (that of its fs.PathError),
// or for an error naming none its one-line text.
func errorPaths(errs []error) []string {
	out := make([]string, 0, len(errs))
	for _, err := range errs {
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			out = append(out, pe.Path)
		} else {
			out = append(out, frontend.OneLine(err.Error()))
		}
	}
	return out
}

// printBackupSummary prints backup's human summary on stdout.
func (a *app) printBackupSummary(opts backup.Options, res *operation.BackupResult) {
	w, s := a.io.Stdout, res.Snapshot.Summary
	if a.g.verbose && res.Parent != nil {
		fmt.Fprintf(w, "Parent:      %s (%s)\n", res.Parent.ID.String()[:8], res.Parent.Time.Local().Format("2006-01-02 15:04:05"))
	}
	fmt.Fprintf(w, "Files:       %d new, %d changed, %d unmodified, %d removed\n", s.FilesNew, s.FilesChanged, s.FilesUnmodified, s.FilesRemoved)
	fmt.Fprintf(w, "Dirs:        %d new, %d changed, %d unmodified\n", s.DirsNew, s.DirsChanged, s.DirsUnmodified)
	fmt.Fprintf(w, "Added:       %s in %d blobs (%s read of %s)\n", frontend.HumanBytes(s.BytesAdded), s.BlobsAdded, frontend.HumanBytes(s.BytesRead), frontend.HumanBytes(s.BytesTotal))
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

// backupLockAhead is the lock a backup's open takes ahead: the backup's,
// none for a dry run (which takes no lock).
func backupLockAhead(dryRun bool) operation.LockAhead {
	if dryRun {
		return operation.NoLockAhead
	}
	return operation.BackupLockAhead
}
