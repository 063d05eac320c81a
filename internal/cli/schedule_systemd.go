package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/cloudstic/cloudstic/internal/config"
	"github.com/cloudstic/cloudstic/internal/frontend"
)

// systemdScheduler writes a .service and a .timer per job.
type systemdScheduler struct {
	dir         string
	user        bool // a user unit (systemctl --user), not a system one
	noSystemctl bool
	env         []string // systemctl's and systemd-analyze's environment (childEnv)
}

func (a *app) newSystemd(f scheduleFlags) (scheduler, error) {
	s := &systemdScheduler{dir: f.unitDir, user: os.Geteuid() != 0, noSystemctl: f.noSystemctl, env: a.childEnv()}
	if s.dir != "" {
		return s, nil
	}
	if !s.user {
		s.dir = "/etc/systemd/system"
		return s, nil
	}
	base := a.io.Getenv("XDG_CONFIG_HOME")
	if base == "" {
		home := a.io.Getenv("HOME")
		if home == "" {
			return nil, errors.New("cannot tell where systemd user units go: set HOME or give -unit-dir")
		}
		base = filepath.Join(home, ".config")
	}
	s.dir = filepath.Join(base, "systemd", "user")
	return s, nil
}

// systemdQuote quotes one word of a unit file's command line or value:
// double quotes, with \ and " escaped, % doubled (specifiers) and $
// doubled (variable expansion).
func systemdQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "%", "%%", "$", "$$")
	return `"` + r.Replace(s) + `"`
}

// units returns the text of a job's service and timer.
func (s schedule) units() (service, timer string) {
	var cmd []string
	for _, w := range append([]string{s.binary}, s.args()...) {
		cmd = append(cmd, systemdQuote(w))
	}
	what := "profile " + s.profile
	if s.allProfiles {
		what = "every enabled profile"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by 'cloudstic schedule install'; remove with 'cloudstic schedule remove'.\n")
	fmt.Fprintf(&b, "[Unit]\nDescription=cloudstic backup of %s\nWants=network-online.target\nAfter=network-online.target\n\n", what)
	fmt.Fprintf(&b, "[Service]\nType=oneshot\n")
	for _, e := range s.env() {
		fmt.Fprintf(&b, "Environment=%s\n", systemdQuote(e))
	}
	// Output goes to the journal: journalctl -u NAME (--user for user units).
	fmt.Fprintf(&b, "ExecStart=%s\nNice=10\nIOSchedulingClass=idle\n", strings.Join(cmd, " "))
	service = b.String()
	b.Reset()
	fmt.Fprintf(&b, "# Written by 'cloudstic schedule install'; remove with 'cloudstic schedule remove'.\n")
	fmt.Fprintf(&b, "[Unit]\nDescription=cloudstic backup of %s, %s\n\n", what, s.every)
	fmt.Fprintf(&b, "[Timer]\nOnCalendar=%s\nRandomizedDelaySec=%d\nPersistent=true\nUnit=%s.service\n\n", s.every, int(s.delay.Seconds()), s.name)
	fmt.Fprintf(&b, "[Install]\nWantedBy=timers.target\n")
	return service, b.String()
}

// unitFiles are the paths and texts of a job's service and timer.
func (sd *systemdScheduler) unitFiles(ctx context.Context, s schedule) ([][2]string, error) {
	if strings.ContainsAny(s.every, "\n\r") {
		return nil, usageErr("-every %q: one line, please", s.every)
	}
	if err := sd.checkCalendar(ctx, s.every); err != nil {
		return nil, err
	}
	service, timer := s.units()
	return [][2]string{{filepath.Join(sd.dir, s.name+".service"), service}, {filepath.Join(sd.dir, s.name+".timer"), timer}}, nil
}

// enableCommands are the systemctl commands install runs after writing
// the units (none with -no-systemctl).
func (sd *systemdScheduler) enableCommands(s schedule) [][]string {
	if sd.noSystemctl {
		return nil
	}
	return [][]string{{"daemon-reload"}, {"enable", "--now", s.name + ".timer"}}
}

// dryRun prints the unit files install would write and the systemctl
// commands it would run.
func (sd *systemdScheduler) dryRun(ctx context.Context, a *app, s schedule) error {
	files, err := sd.unitFiles(ctx, s)
	if err != nil {
		return err
	}
	for _, f := range files {
		fmt.Fprintf(a.io.Stdout, "# %s\n%s\n", f[0], f[1])
	}
	for _, args := range sd.enableCommands(s) {
		if sd.user {
			args = append([]string{"--user"}, args...)
		}
		fmt.Fprintf(a.io.Stdout, "# then: systemctl %s\n", strings.Join(args, " "))
	}
	fmt.Fprintln(a.io.Stdout, "# dry run: nothing was written")
	return nil
}

func (sd *systemdScheduler) install(ctx context.Context, a *app, s schedule) error {
	files, err := sd.unitFiles(ctx, s)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(sd.dir, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		if err := config.WriteFileAtomic(f[0], []byte(f[1])); err != nil {
			return err
		}
		if err := os.Chmod(f[0], 0o644); err != nil { // units are not secret; systemd tools expect them readable
			return err
		}
	}
	for _, args := range sd.enableCommands(s) {
		if err := sd.systemctl(ctx, args...); err != nil {
			return err
		}
	}
	fmt.Fprintf(a.io.Stdout, "Installed %s.timer in %s (%s, randomized delay %s)\n", s.name, sd.dir, s.every, s.delay)
	if sd.user && !a.g.quiet {
		fmt.Fprintln(a.io.Stdout, "User timers run while you are logged in; 'loginctl enable-linger' runs them always.")
	}
	return nil
}

// checkCalendar asks systemd-analyze whether -every is a calendar
// expression systemd accepts, when systemd-analyze is installed.
func (sd *systemdScheduler) checkCalendar(ctx context.Context, every string) error {
	bin, err := exec.LookPath("systemd-analyze")
	if err != nil {
		return nil // systemctl will refuse a bad timer anyway
	}
	var stderr bytes.Buffer
	c := exec.CommandContext(ctx, bin, "calendar", every)
	c.Env = sd.env
	c.Stderr = &stderr
	if err := c.Run(); err != nil {
		return usageErr("-every %q is not a systemd calendar time (e.g. daily, hourly, \"*-*-* 02:30\"): %s", every, strings.TrimSpace(stderr.String()))
	}
	return nil
}

func (sd *systemdScheduler) systemctl(ctx context.Context, args ...string) error {
	if sd.user {
		args = append([]string{"--user"}, args...)
	}
	c := exec.CommandContext(ctx, "systemctl", args...)
	c.Env = sd.env
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	if err := c.Run(); err != nil {
		return fmt.Errorf("systemctl %s: %w: %s (the unit files are in %s; -no-systemctl only writes them)",
			strings.Join(args, " "), err, frontend.OneLine(out.String()), sd.dir)
	}
	return nil
}

func (sd *systemdScheduler) list(_ context.Context, a *app) error {
	timers, err := filepath.Glob(filepath.Join(sd.dir, "cloudstic-backup-*.timer"))
	if err != nil {
		return err
	}
	for _, t := range timers {
		b, err := os.ReadFile(t)
		if err != nil {
			return err
		}
		when := ""
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "OnCalendar="); ok {
				when = v
			}
		}
		fmt.Fprintf(a.io.Stdout, "%s\tsystemd\t%s\t%s\n", strings.TrimSuffix(filepath.Base(t), ".timer"), when, sd.dir)
	}
	return nil
}

func (sd *systemdScheduler) remove(ctx context.Context, a *app, s schedule) error {
	timer := filepath.Join(sd.dir, s.name+".timer")
	if _, err := os.Stat(timer); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no schedule %s in %s", s.name, sd.dir)
	}
	if !sd.noSystemctl {
		if err := sd.systemctl(ctx, "disable", "--now", s.name+".timer"); err != nil {
			return err
		}
	}
	for _, ext := range []string{".timer", ".service"} {
		if err := os.Remove(filepath.Join(sd.dir, s.name+ext)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	if !sd.noSystemctl {
		if err := sd.systemctl(ctx, "daemon-reload"); err != nil {
			return err
		}
	}
	fmt.Fprintf(a.io.Stdout, "Removed %s from %s\n", s.name, sd.dir)
	return nil
}
