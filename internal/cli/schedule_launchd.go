package cli

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/cloudstic/cloudstic/internal/config"
	"github.com/cloudstic/cloudstic/internal/frontend"
)

// launchdScheduler writes a LaunchAgent (a LaunchDaemon as root) plist per
// job and loads it with launchctl.
type launchdScheduler struct {
	dir    string   // ~/Library/LaunchAgents, or /Library/LaunchDaemons as root
	logDir string   // where the job's output goes
	domain string   // launchctl's domain: gui/UID, or system
	env    []string // launchctl's environment (childEnv)
}

// newLaunchd: a LaunchAgent of the user's GUI session, or as root a
// LaunchDaemon; dir (-unit-dir) replaces the folder of the plists.
func (a *app) newLaunchd(dir string) (scheduler, error) {
	l := &launchdScheduler{env: a.childEnv(), domain: fmt.Sprintf("gui/%d", os.Geteuid())}
	if os.Geteuid() == 0 {
		l.dir, l.logDir, l.domain = "/Library/LaunchDaemons", "/Library/Logs", "system"
	} else {
		home := a.io.Getenv("HOME")
		if home == "" {
			return nil, errors.New("cannot tell where launchd agents go: set HOME or give -unit-dir")
		}
		l.dir, l.logDir = filepath.Join(home, "Library", "LaunchAgents"), filepath.Join(home, "Library", "Logs")
	}
	if dir != "" {
		l.dir = dir
	}
	return l, nil
}

// launchdLabel is a job's launchd label, in launchd's reverse-DNS style.
func launchdLabel(name string) string { return "com.cloudstic." + name }

// plistWriter writes the XML of a property list, every string escaped.
type plistWriter struct{ b strings.Builder }

func (w *plistWriter) str(tag, s string) {
	w.b.WriteString("<" + tag + ">")
	_ = xml.EscapeText(&w.b, []byte(s)) // a strings.Builder does not fail
	w.b.WriteString("</" + tag + ">")
}

func (w *plistWriter) key(k string)    { w.b.WriteString("\t"); w.str("key", k) }
func (w *plistWriter) string(s string) { w.str("string", s); w.b.WriteString("\n") }
func (w *plistWriter) integer(i int)   { fmt.Fprintf(&w.b, "<integer>%d</integer>\n", i) }

// plist is a job's launchd property list (launchd.plist(5)): the backup
// command line, the pinned environment, when it runs (launchd has no
// randomized delay: the start is spread as cron's is), where its output
// goes, and a background priority. A job missed while the Mac slept runs
// when it wakes, as launchd does for StartCalendarInterval.
func (l *launchdScheduler) plist(s schedule) (string, error) {
	t, err := jobTime(s, "launchd")
	if err != nil {
		return "", err
	}
	w := &plistWriter{}
	w.b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">` + "\n" +
		"<!-- Written by 'cloudstic schedule install'; remove with 'cloudstic schedule remove'. -->\n" +
		`<plist version="1.0">` + "\n<dict>\n")
	w.key("Label")
	w.string(launchdLabel(s.name))
	w.key("ProgramArguments")
	w.b.WriteString("<array>\n")
	for _, arg := range append([]string{s.binary}, s.args()...) {
		w.b.WriteString("\t")
		w.string(arg)
	}
	w.b.WriteString("</array>\n")
	w.key("EnvironmentVariables")
	w.b.WriteString("<dict>\n")
	for _, e := range s.env() {
		k, v, _ := strings.Cut(e, "=")
		w.key(k)
		w.string(v)
	}
	w.b.WriteString("</dict>\n")
	w.key("StartCalendarInterval")
	w.b.WriteString("<dict>\n")
	if t.weekly {
		w.key("Weekday")
		w.integer(1) // Monday
	}
	if t.hour >= 0 {
		w.key("Hour")
		w.integer(t.hour)
	}
	w.key("Minute")
	w.integer(t.minute)
	w.b.WriteString("</dict>\n")
	w.key("StandardOutPath")
	w.string(filepath.Join(l.logDir, s.name+".log"))
	w.key("StandardErrorPath")
	w.string(filepath.Join(l.logDir, s.name+".log"))
	w.key("ProcessType")
	w.string("Background")
	w.key("LowPriorityIO")
	w.b.WriteString("<true/>\n")
	w.key("Nice")
	w.integer(10)
	w.b.WriteString("</dict>\n</plist>\n")
	return w.b.String(), nil
}

// path is where a job's plist goes.
func (l *launchdScheduler) path(s schedule) string {
	return filepath.Join(l.dir, launchdLabel(s.name)+".plist")
}

func (l *launchdScheduler) dryRun(_ context.Context, a *app, s schedule) error {
	text, err := l.plist(s)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.io.Stdout, "# %s\n%s", l.path(s), text)
	fmt.Fprintf(a.io.Stdout, "# then: launchctl bootout %s/%s (when loaded)\n# then: launchctl bootstrap %s %s\n", l.domain, launchdLabel(s.name), l.domain, l.path(s))
	fmt.Fprintln(a.io.Stdout, "# dry run: nothing was written")
	return nil
}

func (l *launchdScheduler) install(ctx context.Context, a *app, s schedule) error {
	text, err := l.plist(s)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(l.dir, 0o755); err != nil {
		return err
	}
	if err := config.WriteFileAtomic(l.path(s), []byte(text)); err != nil {
		return err
	}
	if err := os.Chmod(l.path(s), 0o644); err != nil { // launchd refuses agents others may write; readable is expected
		return err
	}
	// Reinstalling replaces: unload the old job first. It fails when the
	// job is not loaded, which is the usual case.
	_ = l.launchctl(ctx, "bootout", l.domain+"/"+launchdLabel(s.name))
	if err := l.launchctl(ctx, "bootstrap", l.domain, l.path(s)); err != nil {
		return err
	}
	fmt.Fprintf(a.io.Stdout, "Installed %s in %s (%s); output in %s\n", launchdLabel(s.name), l.dir, s.every, filepath.Join(l.logDir, s.name+".log"))
	return nil
}

func (l *launchdScheduler) launchctl(ctx context.Context, args ...string) error {
	c := exec.CommandContext(ctx, "launchctl", args...)
	c.Env = l.env
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	if err := c.Run(); err != nil {
		return fmt.Errorf("launchctl %s: %w: %s (the plist is in %s)", strings.Join(args, " "), err, frontend.OneLine(out.String()), l.dir)
	}
	return nil
}

func (l *launchdScheduler) list(_ context.Context, a *app) error {
	files, err := filepath.Glob(filepath.Join(l.dir, launchdLabel("cloudstic-backup-*")+".plist"))
	if err != nil {
		return err
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		when := "?"
		if d, err := parsePlist(b); err == nil {
			if cal, ok := d["StartCalendarInterval"].(map[string]any); ok {
				when = calendarString(cal)
			}
		}
		name := strings.TrimPrefix(strings.TrimSuffix(filepath.Base(f), ".plist"), launchdLabel(""))
		fmt.Fprintf(a.io.Stdout, "%s\tlaunchd\t%s\t%s\n", name, when, l.dir)
	}
	return nil
}

func (l *launchdScheduler) remove(ctx context.Context, a *app, s schedule) error {
	if _, err := os.Stat(l.path(s)); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no schedule %s in %s", s.name, l.dir)
	}
	// A job that is not loaded (after a reboot into another user) has
	// nothing to unload: its plist still goes.
	_ = l.launchctl(ctx, "bootout", l.domain+"/"+launchdLabel(s.name))
	if err := os.Remove(l.path(s)); err != nil {
		return err
	}
	fmt.Fprintf(a.io.Stdout, "Removed %s from %s\n", s.name, l.dir)
	return nil
}
