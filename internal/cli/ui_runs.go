package cli

import (
	"context"
	"flag"
	"strconv"
	"strings"

	"github.com/cloudstic/cloudstic/internal/config"
	"github.com/cloudstic/cloudstic/internal/engine/check"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/frontend"
)

// The runs the dashboard offers are typed operations on the repository
// `cloudstic ui` opened, run in process: the same profile runs as backup
// -profile (operation.RunProfile), reported through an app of their own
// whose summary, messages and progress events go to the dashboard.

// profileActions are the runs the page offers for profile name, on r:
// its backup (followed by its retention policy when it has one), and with
// a policy, forget by it followed by a prune.
func (a *app) profileActions(r *operation.Repo, name string, p config.Profile) []frontend.Action {
	acts := []frontend.Action{{Name: "backup-" + actionSlug(name), Label: "Back up " + name, Writes: true,
		Run: a.profileRun(r, name, p, operation.ProfileBackup)}}
	if p.HasRetention() {
		acts = append(acts, frontend.Action{Name: "forget-" + actionSlug(name), Label: "Forget + prune (" + name + "'s policy)",
			Writes: true, Run: a.profileRun(r, name, p, operation.ProfileForget)})
	}
	return acts
}

// checkAction checks r, as `check` does.
func (a *app) checkAction(r *operation.Repo) frontend.Action {
	return frontend.Action{Name: "check", Label: "Check", Run: func(ctx context.Context, out frontend.RunOutput) error {
		run := a.dashboardApp(ctx, out)
		res, err := run.runProfile(ctx, r, operation.ProfileOptions{Job: operation.ProfileCheck})
		if err != nil {
			return err
		}
		return run.printCheck(run.io.Stdout, check.Options{}, res.Check)
	}}
}

// profileRun runs job of profile name on r as backup -profile NAME (or,
// for ProfileForget, forget -prune by the profile's policy) would, with
// backup's default flags.
func (a *app) profileRun(r *operation.Repo, name string, p config.Profile, job operation.ProfileJob) func(context.Context, frontend.RunOutput) error {
	return func(ctx context.Context, out frontend.RunOutput) error {
		run := a.dashboardApp(ctx, out)
		var f backupFlags
		f.register(flag.NewFlagSet("backup", flag.ContinueOnError), run.io.Getenv) // the defaults
		if job == operation.ProfileBackup {
			_, err := run.profileBackupOn(ctx, r, name, p, f)
			return err
		}
		opts, done, err := run.profileOptions(ctx, name, p, f, job, true)
		defer done()
		if err != nil {
			return err
		}
		res, err := run.runProfile(ctx, r, opts)
		if res == nil || res.Forget == nil {
			return err
		}
		run.printForget(res.Forget, false, res.Prune)
		return forgetErr(res.Forget, err)
	}
}

// dashboardApp is the app a run the dashboard started reports through:
// this run's settings, its summary to out.Summary, its messages to
// out.Log and its progress events to out.Progress; never JSON, never a
// prompt, and no flag of its own.
func (a *app) dashboardApp(ctx context.Context, out frontend.RunOutput) *app {
	run := &app{io: a.io, cmd: a.cmd, ctx: ctx, g: a.g, history: a.history, role: a.role, onProgress: out.Progress}
	run.io.Stdin = strings.NewReader("")
	run.io.Stdout, run.io.Stderr = out.Summary, out.Log
	run.g.json, run.g.jsonProgress = false, false
	return run
}

// actionSlug makes a profile name fit an action's name in a URL.
func actionSlug(name string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(name) {
		if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') {
			b.WriteRune(c)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String() + "-" + strconv.Itoa(len(name))
}
