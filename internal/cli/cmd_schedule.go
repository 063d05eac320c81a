package cli

import (
	"context"
	"flag"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/cloudstic/cloudstic/internal/config"
)

// schedule is one scheduled backup job: what runs, when, and where its
// timer or crontab entry lives.
type schedule struct {
	name        string // unit / entry name, cloudstic-backup-PROFILE or cloudstic-backup-all-profiles
	profile     string // empty with allProfiles
	allProfiles bool
	every       string
	delay       time.Duration
	lockWait    time.Duration
	binary      string
	configDir   string
	profiles    string // pinned profiles file, when one was given
}

// args is the backup command line the job runs.
func (s schedule) args() []string {
	args := []string{"backup"}
	if s.allProfiles {
		args = append(args, "-all-profiles")
	} else {
		args = append(args, "-profile", s.profile)
	}
	return append(args, "-lock-wait", s.lockWait.String(), "-quiet")
}

// env is the environment the job pins.
func (s schedule) env() []string {
	env := []string{"CLOUDSTIC_CONFIG_DIR=" + s.configDir}
	if s.profiles != "" {
		env = append(env, "CLOUDSTIC_PROFILES_FILE="+s.profiles)
	}
	return env
}

// scheduleFlags are the flags of schedule install|list|remove.
type scheduleFlags struct {
	all                  bool
	every, scheduler     string
	unitDir, crontabUser string
	delay                time.Duration
	noSystemctl          bool
	dryRun               bool
}

// schedulerOnly names the flags that apply to one scheduler only: given
// for another, they would do nothing (a crontab entry written where units
// were asked for), so they are refused.
var schedulerOnly = []struct{ flag, scheduler string }{{"unit-dir", "systemd or launchd"}, {"no-systemctl", "systemd"}, {"crontab-user", "cron"}}

// installOnly names the flags that apply to schedule install only.
var installOnly = []string{"every", "randomized-delay", "dry-run"}

func (f *scheduleFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.all, "all-profiles", false, "one job that backs up every enabled profile")
	fs.StringVar(&f.every, "every", "", `when: daily, hourly, weekly, or a systemd calendar time such as "*-*-* 02:30"`)
	fs.StringVar(&f.scheduler, "scheduler", "", "systemd, cron, launchd or schtasks (default: launchd on macOS, schtasks on Windows; elsewhere systemd when it runs the machine, else cron)")
	fs.DurationVar(&f.delay, "randomized-delay", 0, "spread the start over this long, so a fleet does not start at the same second (default 5m hourly, 30m otherwise)")
	fs.StringVar(&f.unitDir, "unit-dir", "", "write systemd units or launchd plists here (default ~/.config/systemd/user or ~/Library/LaunchAgents; as root /etc/systemd/system or /Library/LaunchDaemons)")
	fs.BoolVar(&f.noSystemctl, "no-systemctl", false, "only write or remove the unit files; do not run systemctl")
	fs.StringVar(&f.crontabUser, "crontab-user", "", "as root: edit this user's crontab instead of root's")
	fs.BoolVar(&f.dryRun, "dry-run", false, "install: print the unit files or the crontab entry it would write, and the commands it would run; change nothing")
}

func runSchedule(ctx context.Context, a *app, args []string) error {
	sub := func(name string) subcommand {
		return subcommand{name, func(ctx context.Context, a *app, args []string) error { return a.schedule(ctx, name, args) }}
	}
	return a.runSubcommand(ctx, "schedule", "schedule install|list|remove [-profile NAME | -all-profiles] -every daily|hourly|\"*-*-* 02:30\" [-scheduler systemd|cron|launchd|schtasks] [-dry-run]",
		[]subcommand{sub("install"), sub("list"), sub("remove")}, args)
}

// schedule runs schedule's subcommand sub with the rest of the command
// line.
func (a *app) schedule(ctx context.Context, sub string, args []string) error {
	fs := a.flags()
	var f scheduleFlags
	f.register(fs)
	a.g.prof.storeCmd = true // -profile names the job here; nothing to apply
	if err := a.parseNoArgs(fs, args); err != nil {
		return err
	}
	explicit := a.explicit
	if sub != "install" {
		for _, name := range installOnly {
			if explicit[name] {
				return usageErr("-%s applies to schedule install, not %s", name, sub)
			}
		}
	}
	if sub == "list" && (explicit["profile"] || explicit["all-profiles"]) {
		return usageErr("schedule list lists every job; -profile and -all-profiles apply to install and remove")
	}
	kind, why, err := a.schedulerKind(f)
	if err != nil {
		return err
	}
	for _, only := range schedulerOnly {
		if explicit[only.flag] && !slices.Contains(strings.Fields(only.scheduler), kind) {
			return usageErr("-%s applies to -scheduler %s, and this schedule is %s's (%s)", only.flag, only.scheduler, kind, why)
		}
	}
	sched, err := a.newScheduler(kind, f)
	if err != nil {
		return err
	}
	if sub == "list" {
		return sched.list(ctx, a)
	}
	if (a.g.prof.profile == "") == !f.all {
		return usageErr("give -profile NAME or -all-profiles")
	}
	s := schedule{name: "cloudstic-backup-all-profiles", allProfiles: f.all, profile: a.g.prof.profile}
	if !f.all {
		s.name = "cloudstic-backup-" + s.profile
	}
	if sub == "remove" {
		return sched.remove(ctx, a, s)
	}
	if err := a.fillSchedule(&s, f, explicit); err != nil {
		return err
	}
	if f.dryRun {
		return sched.dryRun(ctx, a, s)
	}
	return sched.install(ctx, a, s)
}

// fillSchedule completes an install: the timing, the binary and the
// pinned configuration, checking the profile exists.
func (a *app) fillSchedule(s *schedule, f scheduleFlags, explicit map[string]bool) error {
	if f.every == "" {
		return usageErr("-every is required (daily, hourly, weekly or a calendar time such as \"*-*-* 02:30\")")
	}
	s.every = f.every
	s.delay = f.delay
	if !explicit["randomized-delay"] {
		s.delay = 30 * time.Minute
		if f.every == "hourly" {
			s.delay = 5 * time.Minute
		}
	}
	// A prune window should delay a scheduled backup, not fail it.
	s.lockWait = a.g.lockWait
	if !explicit["lock-wait"] {
		s.lockWait = 30 * time.Minute
	}
	pf, err := a.loadProfiles()
	if err != nil {
		return err
	}
	names := []string{s.profile}
	if s.allProfiles {
		names = pf.ProfileNames()
	}
	for _, name := range names {
		p, err := pf.Profile(name)
		if err != nil {
			return err
		}
		// A relative source is read in the job's working directory, the
		// home directory (/ for a system unit), not this one.
		if path, ok := strings.CutPrefix(p.Source, "local:"); ok && p.IsEnabled() && !filepath.IsAbs(path) && !strings.HasPrefix(path, "~/") {
			a.warnf("profile %s: source %s is relative to the working directory, and the scheduled run starts in the home directory (/ for a system unit): give an absolute or ~/ path", name, p.Source)
		}
	}
	if s.binary, err = os.Executable(); err != nil {
		return fmt.Errorf("finding this program's path: %w", err)
	}
	dir, err := config.Dir(a.io.Getenv)
	if err != nil {
		return err
	}
	if s.configDir, err = filepath.Abs(dir); err != nil {
		return err
	}
	if a.g.prof.profilesFile != "" {
		s.profiles = absPath(a.g.prof.profilesFile)
	}
	return nil
}

// scheduler is systemd timers or a crontab.
type scheduler interface {
	install(ctx context.Context, a *app, s schedule) error
	// dryRun prints what install would write and run, changing nothing.
	dryRun(ctx context.Context, a *app, s schedule) error
	list(ctx context.Context, a *app) error
	remove(ctx context.Context, a *app, s schedule) error
}

// schedulerKinds are the -scheduler values.
var schedulerKinds = []string{"systemd", "cron", "launchd", "schtasks"}

// schedulerKind is the scheduler -scheduler names, or else the one this
// OS runs (defaultScheduler, in schedule_os_*.go), and why it is that one
// (for messages). Any scheduler may be named on any OS: -dry-run shows
// what it would write.
func (a *app) schedulerKind(f scheduleFlags) (kind, why string, err error) {
	if f.scheduler == "" {
		return defaultScheduler()
	}
	if slices.Contains(schedulerKinds, f.scheduler) {
		return f.scheduler, "-scheduler " + f.scheduler, nil
	}
	return "", "", usageErr("-scheduler %q: want %s", f.scheduler, strings.Join(schedulerKinds, ", "))
}

// newScheduler returns the scheduler of kind.
func (a *app) newScheduler(kind string, f scheduleFlags) (scheduler, error) {
	switch kind {
	case "systemd":
		return a.newSystemd(f)
	case "launchd":
		return a.newLaunchd(f.unitDir)
	case "schtasks":
		return a.newSchtasks()
	}
	return &cronScheduler{user: f.crontabUser, env: a.childEnv()}, nil
}

// calendarPattern is the "*-*-* HH:MM" form cron can express.
var calendarPattern = regexp.MustCompile(`^\*-\*-\* ([01]?[0-9]|2[0-3]):([0-5][0-9])(:00)?$`)

// spread returns a stable offset below max for this host and job, so the
// hosts of a fleet start at different times, each at the same time every
// day (cron has no randomized delay of its own).
func spread(job string, max time.Duration) time.Duration {
	if max <= 0 {
		return 0
	}
	host, _ := os.Hostname() // an empty name still gives a valid offset
	h := fnv.New64a()
	h.Write([]byte(host + "\x00" + job))
	return time.Duration(h.Sum64() % uint64(max))
}
