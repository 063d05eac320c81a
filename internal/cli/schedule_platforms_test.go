package cli

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// testSchedule is a job as fillSchedule completes it, with no spread
// (delay 0) so its times are the ones asked for.
func testSchedule(every string, all bool) schedule {
	s := schedule{name: "cloudstic-backup-docs", profile: "docs", every: every, lockWait: 30 * time.Minute,
		binary: "/Applications/Cloud Stic/cloudstic", configDir: "/Users/me/Library/Application Support/cloudstic", profiles: "/Users/me/p&q.yaml"}
	if all {
		s.name, s.profile, s.allProfiles = "cloudstic-backup-all-profiles", "", true
	}
	return s
}

// TestLaunchdPlist: the plist parses as a property list (plutil's
// structure) with the label, the command line word for word, the pinned
// environment, the calendar of -every, and the log paths; characters XML
// escapes survive.
func TestLaunchdPlist(t *testing.T) {
	l := &launchdScheduler{dir: "/Users/me/Library/LaunchAgents", logDir: "/Users/me/Library/Logs", domain: "gui/501"}
	for _, tc := range []struct {
		every string
		all   bool
		cal   map[string]any
		args  []any
	}{
		{"daily", false, map[string]any{"Hour": 0, "Minute": 0}, []any{"backup", "-profile", "docs"}},
		{"*-*-* 02:30", false, map[string]any{"Hour": 2, "Minute": 30}, []any{"backup", "-profile", "docs"}},
		{"hourly", true, map[string]any{"Minute": 0}, []any{"backup", "-all-profiles"}},
		{"weekly", false, map[string]any{"Weekday": 1, "Hour": 0, "Minute": 0}, []any{"backup", "-profile", "docs"}},
	} {
		t.Run(tc.every, func(t *testing.T) {
			s := testSchedule(tc.every, tc.all)
			text, err := l.plist(s)
			if err != nil {
				t.Fatal(err)
			}
			d, err := parsePlist([]byte(text))
			if err != nil {
				t.Fatalf("%v\n%s", err, text)
			}
			args := append(append([]any{s.binary}, tc.args...), "-lock-wait", "30m0s", "-quiet")
			want := map[string]any{
				"Label":            "com.cloudstic." + s.name,
				"ProgramArguments": args,
				"EnvironmentVariables": map[string]any{"CLOUDSTIC_CONFIG_DIR": s.configDir,
					"CLOUDSTIC_PROFILES_FILE": "/Users/me/p&q.yaml"},
				"StartCalendarInterval": tc.cal,
				"StandardOutPath":       filepath.Join(l.logDir, s.name+".log"),
				"StandardErrorPath":     filepath.Join(l.logDir, s.name+".log"),
				"ProcessType":           "Background", "LowPriorityIO": true, "Nice": 10,
			}
			if !reflect.DeepEqual(d, want) {
				t.Errorf("plist\n got %#v\nwant %#v\n%s", d, want, text)
			}
		})
	}
	if _, err := l.plist(testSchedule("Mon *-*-* 02:00", false)); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "-scheduler launchd") {
		t.Errorf("a calendar launchd cannot express: %v, want a usage error naming launchd", err)
	}
}

// TestParsePlistRefuses: what is not a property list of a dict is an
// error, never a panic.
func TestParsePlistRefuses(t *testing.T) {
	for _, in := range []string{"", "<dict></dict>", "<plist><array></array></plist>", "<plist><dict><key>a</key></dict></plist>",
		"<plist><dict><string>x</string></dict></plist>", "<plist><dict><key>a</key><integer>x</integer></dict></plist>",
		"<plist><dict><key>a</key><date>x</date></dict></plist>", "<plist><dict><key>a</key><array>"} {
		if _, err := parsePlist([]byte(in)); !errors.Is(err, errPlist) {
			t.Errorf("parsePlist(%q): %v, want errPlist", in, err)
		}
	}
}

// TestTaskXML: the task file is UTF-16 with a BOM and parses back (with
// encoding/xml) to the trigger of -every, the command (cmd.exe setting
// the pinned variables, then the backup) and the settings.
func TestTaskXML(t *testing.T) {
	for _, tc := range []struct {
		every, start, interval string
		days, weeks            int
		monday                 bool
	}{
		{"daily", "2000-01-03T00:00:00", "", 1, 0, false},
		{"*-*-* 02:30", "2000-01-03T02:30:00", "", 1, 0, false},
		{"hourly", "2000-01-03T00:00:00", "PT1H", 1, 0, false},
		{"weekly", "2000-01-03T00:00:00", "", 0, 1, true},
	} {
		t.Run(tc.every, func(t *testing.T) {
			s := testSchedule(tc.every, false)
			s.binary, s.configDir, s.profiles = `C:\Program Files\cloudstic\cloudstic.exe`, `C:\Users\me\AppData\Roaming\cloudstic`, `C:\Users\me\p&q.yaml`
			def, err := taskDefinition(s)
			if err != nil {
				t.Fatal(err)
			}
			data, err := taskFile(def)
			if err != nil {
				t.Fatal(err)
			}
			got, err := readTaskFile(data)
			if err != nil {
				t.Fatal(err)
			}
			tr := got.Trigger
			if tr.StartBoundary != tc.start || tr.Interval != tc.interval || tr.DaysInterval != tc.days || tr.WeeksInterval != tc.weeks || (tr.Monday != nil) != tc.monday || !tr.Enabled {
				t.Errorf("trigger %+v, want start %s, interval %q, days %d, weeks %d, monday %v", tr, tc.start, tc.interval, tc.days, tc.weeks, tc.monday)
			}
			wantArgs := `/d /s /c "set "CLOUDSTIC_CONFIG_DIR=C:\Users\me\AppData\Roaming\cloudstic" && set "CLOUDSTIC_PROFILES_FILE=C:\Users\me\p&q.yaml" && ` +
				`"C:\Program Files\cloudstic\cloudstic.exe" "backup" "-profile" "docs" "-lock-wait" "30m0s" "-quiet""`
			if got.Exec.Command != `%SystemRoot%\System32\cmd.exe` || got.Exec.Arguments != wantArgs {
				t.Errorf("exec %q %q\nwant args %q", got.Exec.Command, got.Exec.Arguments, wantArgs)
			}
			if got.Registration.URI != `\cloudstic\cloudstic-backup-docs` || !got.Settings.StartWhenAvailable || got.Settings.MultipleInstances != "IgnoreNew" || got.Version != "1.2" {
				t.Errorf("task %+v", got)
			}
			if !strings.Contains(string(data[2:10]), "<\x00?\x00") {
				t.Errorf("not UTF-16 LE after the BOM: % x", data[:10])
			}
		})
	}
	s := testSchedule("daily", false)
	s.configDir = `C:\100%`
	if _, err := taskDefinition(s); !errors.Is(err, errTaskQuote) {
		t.Errorf("a %% in the config dir: %v, want errTaskQuote", err)
	}
}

// TestScheduleDryRunLaunchdSchtasks: install -dry-run with -scheduler
// launchd or schtasks prints the plist or the task XML and the commands
// it would run, on any OS, and writes nothing.
func TestScheduleDryRunLaunchdSchtasks(t *testing.T) {
	dir := t.TempDir()
	r := scheduleRun(t, dir, "install", "-dry-run", "-scheduler", "launchd", "-profile", "docs", "-every", "*-*-* 02:30", "-randomized-delay", "0s")
	if r.code != ExitOK {
		t.Fatalf("launchd: exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"<key>Label</key><string>com.cloudstic.cloudstic-backup-docs</string>", "<key>Hour</key><integer>2</integer>",
		"# then: launchctl bootstrap", "nothing was written"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("launchd dry run lacks %q:\n%s", want, r.stdout)
		}
	}
	r = scheduleRun(t, dir, "install", "-dry-run", "-scheduler", "schtasks", "-profile", "docs", "-every", "hourly")
	if r.code != ExitOK {
		t.Fatalf("schtasks: exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"<Interval>PT1H</Interval>", `<URI>\cloudstic\cloudstic-backup-docs</URI>`, "# then: schtasks /Create /XML", "nothing was written"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("schtasks dry run lacks %q:\n%s", want, r.stdout)
		}
	}
	for _, p := range []string{filepath.Join(dir, "Library"), filepath.Join(dir, "cfg", "schedule")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("a dry run wrote %s (%v)", p, err)
		}
	}
	r = scheduleRun(t, dir, "install", "-scheduler", "at", "-profile", "docs", "-every", "daily")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "want systemd, cron, launchd, schtasks") {
		t.Errorf("-scheduler at: exit %d, %q", r.code, r.stderr)
	}
}

// TestScheduleListLaunchdSchtasks: list shows the jobs whose plist or
// task file install wrote, with their times.
func TestScheduleListLaunchdSchtasks(t *testing.T) {
	dir := t.TempDir()
	s := testSchedule("*-*-* 02:30", false)
	l := &launchdScheduler{logDir: "/logs"}
	text, err := l.plist(s)
	if err != nil {
		t.Fatal(err)
	}
	def, err := taskDefinition(testSchedule("weekly", false))
	if err != nil {
		t.Fatal(err)
	}
	task, err := taskFile(def)
	if err != nil {
		t.Fatal(err)
	}
	for path, data := range map[string][]byte{filepath.Join(dir, "Library", "LaunchAgents", "com.cloudstic.cloudstic-backup-docs.plist"): []byte(text),
		filepath.Join(dir, "cfg", "schedule", "cloudstic-backup-docs.xml"): task} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	agents := filepath.Join(dir, "Library", "LaunchAgents")
	for sched, want := range map[string]string{"launchd": "cloudstic-backup-docs\tlaunchd\tHour=2 Minute=30\t", "schtasks": "cloudstic-backup-docs\tschtasks\tMondays 00:00:00\t"} {
		args := []string{"list", "-scheduler", sched}
		if sched == "launchd" {
			args = append(args, "-unit-dir", agents) // as root the default is /Library/LaunchDaemons
		}
		r := scheduleRun(t, dir, args...)
		if r.code != ExitOK || !strings.Contains(r.stdout, want) {
			t.Errorf("%s list: exit %d, %q %q; want %q", sched, r.code, r.stdout, r.stderr, want)
		}
	}
}
