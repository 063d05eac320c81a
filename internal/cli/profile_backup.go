package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"text/tabwriter"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/config"
	"github.com/cloudstic/cloudstic/internal/engine/forget"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/engine/prune"
	"github.com/cloudstic/cloudstic/internal/termtext"
)

// exitCodeError ends a run with a given exit code; its message is printed
// unless -json (whose document was already written).
type exitCodeError struct {
	code int
	msg  string
}

func (e *exitCodeError) Error() string { return e.msg }

// exitRank orders exit codes from best to worst: success, partial, error,
// usage error, interrupted (the runs after it did not happen).
func exitRank(code int) int {
	switch code {
	case ExitOK:
		return 0
	case ExitPartial:
		return 1
	case ExitError:
		return 2
	case ExitInterrupted:
		return 4
	}
	return 3
}

// applyProfile sets a profile's backup settings on the flags the command
// line left alone (explicit): its source, tags, excludes, exclude file,
// volume UUID, ignore_empty and a cloud drive's auth_ref and credentials.
func (f *backupFlags) applyProfile(name string, p config.Profile, explicit map[string]bool) error {
	f.applyCloudProfile(p, explicit)
	if !explicit["source"] {
		if p.Source == "" {
			return fmt.Errorf("profile %s has no source", name)
		}
		f.src.uris = multiFlag{p.Source}
	}
	if !explicit["tag"] && len(p.Tags) > 0 {
		f.tags = slices.Clone(p.Tags)
	}
	if !explicit["exclude"] && len(p.Excludes) > 0 {
		f.ex.patterns = slices.Clone(p.Excludes)
	}
	if !explicit["exclude-file"] && p.ExcludeFile != "" {
		f.ex.files = multiFlag{p.ExcludeFile}
	}
	if !explicit["volume-uuid"] && p.VolumeUUID != "" {
		f.vf.uuid = p.VolumeUUID
	}
	if !explicit["ignore-empty-snapshot"] && p.IgnoreEmpty {
		f.ignoreEmpty = true
	}
	return nil
}

// applyCloudProfile sets a profile's cloud-drive keys on the flags the
// command line left alone.
func (f *backupFlags) applyCloudProfile(p config.Profile, explicit map[string]bool) {
	if !explicit["auth-ref"] && p.AuthRef != "" {
		f.cloud.authRef = p.AuthRef
	}
	if !explicit["skip-native-files"] && p.SkipNativeFiles {
		f.cloud.skipNative = true
	}
	f.cloud.applyAuth(config.Auth{GoogleCreds: p.GoogleCreds, GoogleCredsRef: p.GoogleCredsRef, GoogleCredsJSON: p.GoogleCredsJSON,
		GoogleTokenFile: p.GoogleTokenFile, GoogleTokenRef: p.GoogleTokenRef, OneDriveClientID: p.OneDriveClientID,
		OneDriveTokenFile: p.OneDriveTokenFile, OneDriveTokenRef: p.OneDriveTokenRef}, explicit)
}

// retentionPolicy is a profile's keep_* rules.
func retentionPolicy(p config.Profile) forget.Policy {
	return forget.Policy{Last: p.KeepLast, Hourly: p.KeepHourly, Daily: p.KeepDaily,
		Weekly: p.KeepWeekly, Monthly: p.KeepMonthly, Yearly: p.KeepYearly}
}

// defaultPruneOptions are prune's options when no flag is given: those of
// a profile's prune: true.
func defaultPruneOptions() prune.Options {
	var pf pruneFlags
	pf.register(flag.NewFlagSet("prune", flag.ContinueOnError))
	opts, err := pf.options()
	if err != nil {
		panic(err) // the flags' defaults are valid; TestProfileRuns runs them
	}
	return opts
}

// profileOptions are the typed run of one of a profile's jobs: f (backup's
// flags) with the profile applied, its source read as -source is, its
// retention policy, and prune's default options when the profile prunes
// (or always, with prune set). done closes the source.
func (a *app) profileOptions(ctx context.Context, name string, p config.Profile, f backupFlags, job operation.ProfileJob, prune bool) (operation.ProfileOptions, func(), error) {
	opts := operation.ProfileOptions{Job: job, Policy: retentionPolicy(p)}
	if err := opts.Policy.Validate(); err != nil {
		return opts, func() {}, fmt.Errorf("profile %s: %w", name, err)
	}
	if err := f.applyProfile(name, p, a.explicit); err != nil {
		return opts, func() {}, err
	}
	var done func()
	var err error
	if opts.Backup, done, err = a.backupOptions(ctx, &f); err != nil {
		return opts, done, err
	}
	if prune || p.Prune {
		po := defaultPruneOptions()
		opts.Prune = &po
	}
	return opts, done, nil
}

// runProfile runs a profile's job on r with this run's progress
// reporting (prune's and check's log lines without it).
func (a *app) runProfile(ctx context.Context, r *operation.Repo, opts operation.ProfileOptions) (*operation.ProfileResult, error) {
	rep, endProgress := a.reporter()
	defer endProgress()
	opts.Progress = rep
	if !a.g.quiet && !a.g.json {
		opts.Check.Logf = a.infof
		if opts.Prune != nil && rep == nil {
			opts.Prune.Logf = a.infof
		}
	}
	return operation.RunProfile(ctx, r, opts)
}

// profileBackup backs up profile name with this run's flags (f) and
// repository, then applies its retention policy. It prints the human
// output as it goes; with -json it returns the document instead: the
// backup's own when no policy applies, else profileBackupResult. The
// error is the run's, as finish maps it.
func (a *app) profileBackup(ctx context.Context, name string, p config.Profile, f backupFlags) (doc any, err error) {
	r, err := a.openRepoAhead(ctx, backupLockAhead(f.dryRun))
	if err != nil {
		return nil, err
	}
	defer a.closeStore()
	return a.profileBackupOn(ctx, r, name, p, f)
}

// profileBackupOn is profileBackup on the opened repository r.
func (a *app) profileBackupOn(ctx context.Context, r *operation.Repo, name string, p config.Profile, f backupFlags) (doc any, err error) {
	opts, done, err := a.profileOptions(ctx, name, p, f, operation.ProfileBackup, false)
	defer done()
	if err != nil {
		return nil, err
	}
	start := clock.Real{}.Now()
	res, err := a.runProfile(ctx, r, opts)
	var b *operation.BackupResult
	if res != nil {
		b = res.Backup
	}
	metricsErr := a.backupMetrics(f.metricsFile, name, start, b, profileBackupErr(err))
	if opts.Policy.Empty() || opts.Backup.DryRun {
		doc, err = a.backupOutcome(opts, res, err)
		return doc, a.metricsOutcome(err, metricsErr)
	}
	doc, err = a.retentionOutcome(name, opts, res, err)
	return doc, a.metricsOutcome(err, metricsErr)
}

// backupOutcome reports a profile backup without retention, as a plain
// backup.
func (a *app) backupOutcome(opts operation.ProfileOptions, res *operation.ProfileResult, err error) (any, error) {
	if res == nil || res.Backup == nil {
		return nil, a.backupErr(opts.Backup, err)
	}
	return a.backupDoc(opts.Backup, res.Backup), a.backupReport(opts.Backup, res.Backup)
}

// retentionOutcome reports a profile backup followed by its retention
// policy: the backup's summary (or error), then forget's and prune's.
func (a *app) retentionOutcome(name string, opts operation.ProfileOptions, res *operation.ProfileResult, err error) (any, error) {
	doc := profileBackupResult{Profile: name}
	var berr, ferr error
	if res == nil || res.Backup == nil {
		berr = a.backupErr(opts.Backup, err)
		code, msg := errorCode(berr)
		doc.Backup = errorResult{Error: msg, ExitCode: code}
	} else {
		doc.Backup = a.backupDoc(opts.Backup, res.Backup)
		berr, ferr = a.backupReport(opts.Backup, res.Backup), err
	}
	switch {
	case res != nil && res.Forget != nil:
		doc.Forget = a.forgetDoc(res.Forget, false, res.Prune, ferr)
		if !a.g.json {
			a.printForget(res.Forget, false, res.Prune)
		}
		ferr = forgetErr(res.Forget, ferr)
	case ferr != nil:
		code, msg := errorCode(ferr)
		doc.Forget = errorResult{Error: msg, ExitCode: code}
	}
	code, _ := errorCode(berr)
	if fcode, _ := errorCode(ferr); exitRank(fcode) > exitRank(code) {
		code = fcode
	}
	doc.ExitCode = code
	switch {
	case berr != nil && !errors.Is(berr, errPartial):
		return doc, berr
	case ferr != nil:
		_, msg := errorCode(ferr)
		return doc, &exitCodeError{code: code, msg: "the backup was saved, but " + msg}
	}
	return doc, berr
}

// backupProfile is `backup -profile NAME`.
func (a *app) backupProfile(ctx context.Context, f backupFlags) error {
	pf, err := a.loadProfiles()
	if err != nil {
		return err
	}
	p, err := pf.Profile(a.g.prof.profile)
	if err != nil {
		return err
	}
	doc, err := a.profileBackup(ctx, a.g.prof.profile, p, f)
	if !a.g.json || doc == nil {
		return err
	}
	a.writeJSON(doc)
	if code, msg := errorCode(err); code != ExitOK && code != ExitPartial {
		return &exitCodeError{code: code, msg: msg} // no second JSON document
	}
	return err
}

// profileOutcome is one line of the -all-profiles summary.
type profileOutcome struct {
	Profile  string  `json:"profile"`
	Store    string  `json:"store,omitempty"`
	ExitCode int     `json:"exit_code"`
	Error    string  `json:"error,omitempty"`
	Seconds  float64 `json:"duration_seconds"`
	Result   any     `json:"result,omitempty"`
}

// backupAllProfiles backs up every enabled profile in name order, each
// with its own store and lock; a failure does not stop the others. The
// exit code is the worst of them.
func (a *app) backupAllProfiles(ctx context.Context, f backupFlags) error {
	pf, err := a.loadProfiles()
	if err != nil {
		return err
	}
	outcomes := []profileOutcome{}
	worst := ExitOK
	for _, name := range pf.ProfileNames() {
		p := pf.Profiles[name]
		if !p.IsEnabled() {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if !a.g.json {
			fmt.Fprintf(a.io.Stderr, "== profile %s ==\n", name)
		}
		start := clock.Real{}.Now()
		sub, err := a.forProfile(ctx, name)
		var doc any
		if err == nil {
			doc, err = sub.profileBackup(ctx, name, p, f)
		}
		code, msg := errorCode(err)
		o := profileOutcome{Profile: name, Store: p.Store, ExitCode: code, Error: msg, Seconds: clock.Real{}.Now().Sub(start).Seconds(), Result: doc}
		if msg != "" && !a.g.json {
			fmt.Fprintf(a.io.Stderr, "cloudstic backup: profile %s: %s\n", name, termtext.Safe(msg))
		}
		outcomes = append(outcomes, o)
		if exitRank(code) > exitRank(worst) {
			worst = code
		}
	}
	if a.g.json {
		a.writeJSON(outcomes)
	} else {
		a.printProfileSummary(outcomes)
	}
	failed := 0
	for _, o := range outcomes {
		if o.ExitCode != ExitOK {
			failed++
		}
	}
	if worst == ExitOK {
		return nil
	}
	return &exitCodeError{code: worst, msg: fmt.Sprintf("%d of %d profiles did not complete cleanly (see the summary)", failed, len(outcomes))}
}

func (a *app) printProfileSummary(outcomes []profileOutcome) {
	w := tabwriter.NewWriter(a.io.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "\nPROFILE\tSTORE\tRESULT\tTIME\tERROR")
	for _, o := range outcomes {
		status := map[int]string{ExitOK: "ok", ExitPartial: "partial", ExitError: "failed", ExitUsage: "bad usage"}[o.ExitCode]
		fmt.Fprintf(w, "%s\t%s\t%s\t%.1fs\t%s\n", o.Profile, o.Store, status, o.Seconds, termtext.Safe(o.Error))
	}
	if err := w.Flush(); err != nil {
		a.warnf("writing the summary: %v", err)
	}
}
