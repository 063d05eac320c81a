package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/cloudstic/cloudstic/internal/config"
	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/frontend"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/termtext"
	"github.com/cloudstic/cloudstic/internal/tui"
)

// The runs of `cloudstic tui` are those of the web dashboard (ui_runs.go):
// typed operations run in process through an app of their own whose
// summary, messages and progress go to the screen, never to the terminal
// the screen draws on, and which never prompts. Each run opens the
// profile's repository and closes it when done: the screen may have
// created the repository (init) since it started.

// tuiProfile describes profile name of f (the profiles file at path).
func (a *app) tuiProfile(f *config.File, path, name string, p config.Profile) tui.Profile {
	tp := tui.Profile{Name: name, Source: termtext.Safe(p.Source), Store: termtext.Safe(p.Store), Auth: termtext.Safe(p.AuthRef),
		Retention: retentionText(p)}
	if s, ok := f.Stores[p.Store]; ok {
		tp.Store = termtext.Safe(p.Store + " (" + s.URI + ")")
	} else if p.Store == "" {
		tp.Store = "none in the profile (-store / CLOUDSTIC_STORE)"
	}
	tp.Status = func(ctx context.Context) tui.Status { return a.tuiStatus(ctx, f, name, p) }
	tp.Locks = func(ctx context.Context) ([]tui.Lock, error) { return a.tuiLocks(ctx, name) }
	tp.Backup = a.tuiJob(name, p, operation.ProfileBackup)
	tp.Check = a.tuiJob(name, p, operation.ProfileCheck)
	if p.HasRetention() {
		tp.Forget = a.tuiJob(name, p, operation.ProfileForget)
	}
	if p.Store != "" {
		tp.Init = a.tuiInit(path, p.Store)
	}
	return tp
}

// retentionText is a profile's policy as the screen shows it.
func retentionText(p config.Profile) string {
	var parts []string
	for _, r := range []struct {
		name string
		n    int
	}{{"last", p.KeepLast}, {"hourly", p.KeepHourly}, {"daily", p.KeepDaily}, {"weekly", p.KeepWeekly}, {"monthly", p.KeepMonthly}, {"yearly", p.KeepYearly}} {
		if r.n > 0 {
			parts = append(parts, fmt.Sprintf("keep-%s %d", r.name, r.n))
		}
	}
	return strings.Join(parts, ", ")
}

// tuiApp is the app of one of the screen's runs or reads of profile name:
// dashboardApp's (no prompt, output to out), the profile applied.
func (a *app) tuiApp(ctx context.Context, name string, out frontend.RunOutput) (*app, error) {
	return a.dashboardApp(ctx, out).forProfile(ctx, name)
}

// tuiJob runs job of profile name as the dashboard's runs do.
func (a *app) tuiJob(name string, p config.Profile, job operation.ProfileJob) tui.Job {
	return func(ctx context.Context, out frontend.RunOutput) error {
		sub, err := a.tuiApp(ctx, name, out)
		if err != nil {
			return err
		}
		r, err := sub.openRepo(ctx)
		if err != nil {
			return err
		}
		defer sub.closeStore()
		if job == operation.ProfileCheck {
			return sub.checkAction(r).Run(ctx, out)
		}
		return sub.profileRun(r, name, p, job)(ctx, out)
	}
}

// tuiInit creates the repository of store entry store, as `store init
// -yes NAME` does (the screen asked first).
func (a *app) tuiInit(path, store string) tui.Job {
	return func(ctx context.Context, out frontend.RunOutput) error {
		run := a.dashboardApp(ctx, out)
		sub := &app{io: run.io, cmd: a.cmd, ctx: ctx}
		sub.g.prof.storeName = store
		return runInit(ctx, sub, []string{"-profiles-file=" + path})
	}
}

// tuiLocks lists the locks of profile name's store, as `locks` does: no
// password needed, and the repository need not open.
func (a *app) tuiLocks(ctx context.Context, name string) ([]tui.Lock, error) {
	sub, err := a.tuiApp(ctx, name, frontend.RunOutput{Log: io.Discard, Summary: io.Discard})
	if err != nil {
		return nil, err
	}
	st, err := sub.openStore(ctx, false)
	if err == nil {
		defer sub.closeStore()
	}
	var infos []operation.LockInfo
	if err == nil {
		infos, err = operation.Locks(ctx, st, sub.lockOptions())
	}
	if errors.Is(err, operation.ErrNoRepository) {
		return nil, nil // no repository, no locks
	}
	if err != nil {
		return nil, err
	}
	locks := make([]tui.Lock, 0, len(infos))
	for _, l := range infos {
		tl := tui.Lock{Operation: termtext.Safe(l.Operation), Holder: termtext.Safe(l.Holder), Shared: l.IsShared, Expires: l.ExpiresAt, State: "live"}
		switch {
		case l.Err != nil:
			tl.State, tl.Operation, tl.Holder = "unreadable", "?", termtext.Safe(l.Key)
		case l.Stale:
			tl.State = "stale"
		case l.Dead:
			tl.State = "dead"
		}
		locks = append(locks, tl)
	}
	return locks, nil
}

// tuiStatus reads profile name's readiness and snapshots: the store
// opened and read, the repository in it, the credentials resolved and
// opening it (as `store verify` judges them), and the cloud login the
// source needs.
func (a *app) tuiStatus(ctx context.Context, f *config.File, name string, p config.Profile) tui.Status {
	st := tui.Status{Auth: authReadiness(f, p)}
	fail := func(err error) tui.Readiness {
		return tui.Readiness{Known: true, Note: termtext.Safe(frontend.OneLine(err.Error()))}
	}
	ok := tui.Readiness{Known: true, OK: true}
	sub, err := a.tuiApp(ctx, name, frontend.RunOutput{Log: io.Discard, Summary: io.Discard})
	if err != nil { // a secret reference of the store that did not resolve
		st.Credentials = fail(err)
		return st
	}
	o, err := sub.openOptions()
	if err != nil {
		st.Reachable = fail(err)
		return st
	}
	var credErr error
	o.Credentials = func(ctx context.Context) (repo.Credentials, error) {
		c, err := sub.credentials(ctx, false)
		credErr = err
		return c, err
	}
	r, err := operation.Open(ctx, o)
	switch {
	case err == nil:
	case errors.Is(err, operation.ErrNoRepository):
		st.Reachable, st.Initialized = ok, fail(err)
		return st
	case credErr != nil, errors.Is(err, repo.ErrNeedCredential), errors.Is(err, repo.ErrWrongCredential):
		st.Reachable, st.Initialized, st.Credentials = ok, ok, fail(err)
		return st
	default: // unreachable, or a store that answers but not with a repository
		st.Reachable = fail(sub.openErr(err))
		return st
	}
	defer func() { _ = r.Close() }() // only read from; nothing to lose
	st.Reachable, st.Initialized, st.Credentials = ok, ok, ok
	snaps, err := r.IndexedSnapshots(ctx)
	if err != nil {
		st.Initialized = fail(err)
		return st
	}
	origin := sub.tuiOrigin(ctx, name, p)
	for _, s := range snaps {
		if origin == nil || (s.Source == origin.Source && (p.CloudDrive() || (s.Path == origin.Path && s.Hostname == origin.Hostname))) {
			st.Snapshots = append(st.Snapshots, tuiSnapshot(s))
		}
	}
	return st
}

// tuiOrigin is what a backup of profile name records as its origin: the
// profile's snapshots are those that record the same (nil when the source
// cannot be resolved now: then every snapshot is shown).
func (a *app) tuiOrigin(ctx context.Context, name string, p config.Profile) *snapshot.Snapshot {
	if p.CloudDrive() {
		// Resolving a cloud drive's root takes a sign-in and requests:
		// not on every refresh. Its snapshots record the source as given.
		return &snapshot.Snapshot{Source: p.Source}
	}
	var f backupFlags
	f.register(flag.NewFlagSet("backup", flag.ContinueOnError), a.io.Getenv)
	opts, done, err := a.profileOptions(ctx, name, p, f, operation.ProfileForget, false)
	defer done()
	if err != nil {
		return nil
	}
	origin, err := backup.Recorded(ctx, opts.Backup)
	if err != nil {
		return nil
	}
	return origin
}

func tuiSnapshot(s snapshot.WithID) tui.Snapshot {
	tags := make([]string, len(s.Tags))
	for i, t := range s.Tags {
		tags[i] = termtext.Safe(t)
	}
	return tui.Snapshot{ID: s.ID.Short(), Time: s.Time, Host: termtext.Safe(s.Hostname), Files: s.Summary.FilesTotal,
		Bytes: s.Summary.BytesTotal, Tags: tags}
}

// authReadiness: a cloud drive source needs its login (auth_ref naming an
// entry of auth:); other sources need none.
func authReadiness(f *config.File, p config.Profile) tui.Readiness {
	if !p.CloudDrive() {
		return tui.Readiness{}
	}
	if p.AuthRef == "" {
		return tui.Readiness{Known: true, OK: p.GoogleTokenFile != "" || p.GoogleTokenRef != "" || p.OneDriveTokenFile != "" || p.OneDriveTokenRef != "",
			Note: "no auth_ref and no token file or reference"}
	}
	if _, ok := f.Auth[p.AuthRef]; !ok {
		return tui.Readiness{Known: true, Note: termtext.Safe("auth_ref " + p.AuthRef + " is not in auth:")}
	}
	return tui.Readiness{Known: true, OK: true}
}
