//go:build unix

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// scheduleEnv is a config directory (with a space and a % in its path, to
// test quoting) holding two profiles.
func scheduleEnv(t *testing.T) *profileEnv {
	p := newProfileEnv(t)
	p.cfg = filepath.Join(p.dir, "my cfg %d")
	p.env = append(p.env, "CLOUDSTIC_CONFIG_DIR="+p.cfg)
	if err := os.MkdirAll(p.cfg, 0o700); err != nil {
		t.Fatal(err)
	}
	yaml := "version: 1\nprofiles:\n  docs:\n    source: local:/home/me/Documents\n  photos.2024:\n    source: local:/home/me/Photos\n"
	if err := os.WriteFile(filepath.Join(p.cfg, "profiles.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestScheduleSystemd writes timers and services and has systemd-analyze
// verify them (systemd does not run in the test machine, so -no-systemctl).
func TestScheduleSystemd(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Fatalf("systemd-analyze not found (scripts/test.sh installs the systemd package): %v", err)
	}
	p := scheduleEnv(t)
	units := filepath.Join(p.dir, "units")
	base := []string{"-scheduler", "systemd", "-unit-dir", units, "-no-systemctl"}
	p.mustRun(t, append([]string{"schedule", "install", "-profile", "docs", "-every", "*-*-* 02:30"}, base...)...)
	p.mustRun(t, append([]string{"schedule", "install", "-all-profiles", "-every", "hourly", "-lock-wait", "2h"}, base...)...)
	for _, name := range []string{"cloudstic-backup-docs", "cloudstic-backup-all-profiles"} {
		files := []string{filepath.Join(units, name+".service"), filepath.Join(units, name+".timer")}
		out, err := exec.Command(analyze, append([]string{"verify"}, files...)...).CombinedOutput()
		if err != nil || len(strings.TrimSpace(string(out))) > 0 {
			t.Errorf("systemd-analyze verify %s: %v\n%s", name, err, out)
		}
	}
	service, _ := os.ReadFile(filepath.Join(units, "cloudstic-backup-docs.service"))
	timer, _ := os.ReadFile(filepath.Join(units, "cloudstic-backup-docs.timer"))
	for _, want := range []string{`"backup" "-profile" "docs" "-lock-wait" "30m0s"`, `Environment="CLOUDSTIC_CONFIG_DIR=` + strings.ReplaceAll(p.cfg, "%", "%%") + `"`} {
		if !strings.Contains(string(service), want) {
			t.Errorf("service lacks %q:\n%s", want, service)
		}
	}
	for _, want := range []string{"OnCalendar=*-*-* 02:30", "RandomizedDelaySec=1800", "Persistent=true", "WantedBy=timers.target"} {
		if !strings.Contains(string(timer), want) {
			t.Errorf("timer lacks %q:\n%s", want, timer)
		}
	}
	all, _ := os.ReadFile(filepath.Join(units, "cloudstic-backup-all-profiles.service"))
	if !strings.Contains(string(all), `"-all-profiles" "-lock-wait" "2h0m0s"`) {
		t.Errorf("all-profiles service:\n%s", all)
	}
	res := p.mustRun(t, append([]string{"schedule", "list"}, base...)...)
	if !strings.Contains(res.stdout, "cloudstic-backup-docs\tsystemd\t*-*-* 02:30") || !strings.Contains(res.stdout, "cloudstic-backup-all-profiles\tsystemd\thourly") {
		t.Errorf("list: %v", res)
	}

	bad := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-profile", "docs", "-every", "at teatime"}, 2, "not a systemd calendar time"},
		{[]string{"-profile", "nope", "-every", "daily"}, 1, "no such profile"},
		{[]string{"-every", "daily"}, 2, "-profile NAME or -all-profiles"},
		{[]string{"-profile", "docs"}, 2, "-every is required"},
	}
	for _, b := range bad {
		res := p.run(t, append(append([]string{"schedule", "install"}, b.args...), base...)...)
		wantCode(t, res, b.code)
		wantOneLineError(t, res, b.want)
	}

	p.mustRun(t, append([]string{"schedule", "remove", "-profile", "docs"}, base...)...)
	if _, err := os.Stat(filepath.Join(units, "cloudstic-backup-docs.timer")); !os.IsNotExist(err) {
		t.Errorf("timer left after remove: %v", err)
	}
	res = p.run(t, append([]string{"schedule", "remove", "-profile", "docs"}, base...)...)
	wantCode(t, res, 1)
}

// TestScheduleCron installs, lists and removes crontab entries of a
// temporary user with the real crontab (Debian's cron), keeping the
// user's own entries.
func TestScheduleCron(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the crontab test creates a user: run it as root (CI does)")
	}
	if _, err := exec.LookPath("crontab"); err != nil {
		t.Fatalf("crontab not found (scripts/test.sh installs the cron package): %v", err)
	}
	user := "cs-crontest"
	if err := exec.Command("id", user).Run(); err != nil {
		if out, err := exec.Command("useradd", "-M", "-s", "/usr/sbin/nologin", user).CombinedOutput(); err != nil {
			t.Fatalf("useradd: %v\n%s", err, out)
		}
		t.Cleanup(func() { _ = exec.Command("userdel", user).Run() }) // best effort: the user owns nothing
	}
	t.Cleanup(func() { _ = exec.Command("crontab", "-u", user, "-r").Run() }) // best effort, as above
	own := "MAILTO=\"\"\n17 4 * * * /usr/bin/true # the user's own job\n"
	c := exec.Command("crontab", "-u", user, "-")
	c.Stdin = strings.NewReader(own)
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("crontab: %v\n%s", err, out)
	}
	p := scheduleEnv(t)
	base := []string{"-scheduler", "cron", "-crontab-user", user}
	crontab := func() string {
		out, err := exec.Command("crontab", "-u", user, "-l").Output()
		if err != nil {
			t.Fatalf("crontab -l: %v", err)
		}
		return string(out)
	}
	p.mustRun(t, append([]string{"schedule", "install", "-profile", "photos.2024", "-every", "*-*-* 02:30", "-randomized-delay", "0s"}, base...)...)
	p.mustRun(t, append([]string{"schedule", "install", "-all-profiles", "-every", "hourly"}, base...)...)
	// Reinstalling replaces the entry.
	p.mustRun(t, append([]string{"schedule", "install", "-profile", "photos.2024", "-every", "*-*-* 03:45", "-randomized-delay", "0s"}, base...)...)
	text := crontab()
	if !strings.HasPrefix(text, own) {
		t.Errorf("the user's own entries were changed:\n%s", text)
	}
	if strings.Count(text, "cloudstic-backup-photos.2024") != 1 || !strings.Contains(text, "\n45 3 * * * CLOUDSTIC_CONFIG_DIR=") {
		t.Errorf("photos entry:\n%s", text)
	}
	for _, want := range []string{`'backup' '-profile' 'photos.2024' '-lock-wait' '30m0s' '-quiet'`, `'backup' '-all-profiles'`,
		"CLOUDSTIC_CONFIG_DIR='" + strings.ReplaceAll(p.cfg, "%", `\%`) + "'"} {
		if !strings.Contains(text, want) {
			t.Errorf("crontab lacks %q:\n%s", want, text)
		}
	}
	res := p.mustRun(t, append([]string{"schedule", "list"}, base...)...)
	if !strings.Contains(res.stdout, "cloudstic-backup-photos.2024\tcron\t45 3 * * *") || !strings.Contains(res.stdout, "cloudstic-backup-all-profiles\tcron\t") {
		t.Errorf("list: %v", res)
	}
	res = p.run(t, append([]string{"schedule", "install", "-profile", "docs", "-every", "Mon *-*-* 02:00"}, base...)...)
	wantCode(t, res, 2)
	p.mustRun(t, append([]string{"schedule", "remove", "-profile", "photos.2024"}, base...)...)
	p.mustRun(t, append([]string{"schedule", "remove", "-all-profiles"}, base...)...)
	if text := crontab(); text != own {
		t.Errorf("after removing both, the crontab is\n%s\nwant the user's own\n%s", text, own)
	}
}
