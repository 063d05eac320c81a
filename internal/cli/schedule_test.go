package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// scheduleRun runs `schedule ARGS` with a profiles file holding profile
// docs, and returns its outcome.
func scheduleRun(t *testing.T, dir string, args ...string) uxResult {
	t.Helper()
	profiles := filepath.Join(dir, "profiles.yaml")
	yaml := "version: 1\nprofiles:\n  docs:\n    source: local:/home/me/Documents\n  rel:\n    source: local:./Documents\n"
	if err := os.WriteFile(profiles, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"CLOUDSTIC_CONFIG_DIR": filepath.Join(dir, "cfg"), "CLOUDSTIC_PROFILES_FILE": profiles, "HOME": dir}
	var out, errb bytes.Buffer
	code := Main(context.Background(), append([]string{"schedule"}, args...), IO{Stdin: bytes.NewReader(nil), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return env[k] }})
	return uxResult{out.String(), errb.String(), code}
}

// TestScheduleRefusesFlagsOfAnotherScheduler: a flag of one scheduler
// given with another is a usage error naming both (it wrote a crontab
// entry when -unit-dir and -no-systemctl were given without -scheduler
// systemd on a machine without systemd); install's flags are refused by
// list and remove. Every case has -dry-run or an -every cron refuses, so
// that nothing could be written even where a check were missing.
func TestScheduleRefusesFlagsOfAnotherScheduler(t *testing.T) {
	dir := t.TempDir()
	units := filepath.Join(dir, "units")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unit dir for cron", []string{"install", "-scheduler", "cron", "-profile", "docs", "-every", "daily", "-unit-dir", units, "-no-systemctl", "-dry-run"}, "-unit-dir applies to -scheduler systemd"},
		// Without -dry-run, and with an -every cron cannot express: the
		// old code went on to the crontab and failed there, never
		// naming -unit-dir.
		{"unit dir for cron, no dry run", []string{"install", "-scheduler", "cron", "-profile", "docs", "-every", "Mon *-*-* 02:00", "-unit-dir", units, "-no-systemctl"}, "-unit-dir applies to -scheduler systemd"},
		{"no-systemctl for cron", []string{"install", "-scheduler", "cron", "-profile", "docs", "-every", "daily", "-no-systemctl", "-dry-run"}, "-no-systemctl applies to -scheduler systemd"},
		{"crontab user for systemd", []string{"install", "-scheduler", "systemd", "-profile", "docs", "-every", "daily", "-crontab-user", "nobody", "-dry-run"}, "-crontab-user applies to -scheduler cron"},
		{"every for list", []string{"list", "-scheduler", "cron", "-every", "daily", "-dry-run"}, "applies to schedule install"},
		{"dry run for remove", []string{"remove", "-scheduler", "cron", "-profile", "docs", "-dry-run"}, "-dry-run applies to schedule install"},
		{"profile for list", []string{"list", "-scheduler", "cron", "-profile", "docs"}, "lists every job"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := scheduleRun(t, dir, tc.args...)
			if r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
				t.Errorf("exit %d, stderr %q; want exit 2 and one line with %q", r.code, r.stderr, tc.want)
			}
		})
	}
	if _, err := os.Stat(units); !os.IsNotExist(err) {
		t.Errorf("a refused install wrote %s (%v)", units, err)
	}
}

// TestScheduleInstallDryRun: install -dry-run prints the units (and the
// systemctl commands) or the crontab entry it would write, and writes
// nothing.
func TestScheduleInstallDryRun(t *testing.T) {
	dir := t.TempDir()
	units := filepath.Join(dir, "units")
	r := scheduleRun(t, dir, "install", "-dry-run", "-scheduler", "systemd", "-unit-dir", units, "-profile", "docs", "-every", "daily")
	if r.code != ExitOK {
		t.Fatalf("systemd: exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"# " + filepath.Join(units, "cloudstic-backup-docs.service") + "\n", `"backup" "-profile" "docs"`,
		"# " + filepath.Join(units, "cloudstic-backup-docs.timer") + "\n", "OnCalendar=daily", "# then: systemctl", "enable --now cloudstic-backup-docs.timer", "nothing was written"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("systemd dry run lacks %q:\n%s", want, r.stdout)
		}
	}
	if _, err := os.Stat(units); !os.IsNotExist(err) {
		t.Errorf("a dry run wrote %s (%v)", units, err)
	}
	r = scheduleRun(t, dir, "install", "-dry-run", "-scheduler", "systemd", "-unit-dir", units, "-no-systemctl", "-profile", "docs", "-every", "daily")
	if r.code != ExitOK || strings.Contains(r.stdout, "systemctl") {
		t.Errorf("systemd -no-systemctl dry run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = scheduleRun(t, dir, "install", "-dry-run", "-scheduler", "cron", "-crontab-user", "nobody", "-profile", "docs", "-every", "*-*-* 02:30", "-randomized-delay", "0s")
	if r.code != ExitOK {
		t.Fatalf("cron: exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"the crontab of nobody", "# cloudstic schedule: cloudstic-backup-docs\n30 2 * * * ", "'backup' '-profile' 'docs'", "nothing was written"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("cron dry run lacks %q:\n%s", want, r.stdout)
		}
	}
}

// TestScheduleWarnsOfRelativeSources: a profile whose source is relative
// to the working directory would back up another directory when the job
// runs in the home directory: install says so.
func TestScheduleWarnsOfRelativeSources(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		warn bool
	}{
		{[]string{"-profile", "rel"}, true},
		{[]string{"-all-profiles"}, true},
		{[]string{"-profile", "docs"}, false},
	} {
		r := scheduleRun(t, dir, append([]string{"install", "-dry-run", "-scheduler", "cron", "-every", "daily"}, tc.args...)...)
		if r.code != ExitOK || strings.Contains(r.stderr, "profile rel: source local:./Documents is relative") != tc.warn {
			t.Errorf("%v: exit %d, stderr %q; want a warning: %v", tc.args, r.code, r.stderr, tc.warn)
		}
	}
}
