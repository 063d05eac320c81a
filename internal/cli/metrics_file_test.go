package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/cli"
	"github.com/cloudstic/cloudstic/internal/engine/metrics"
)

// TestBackupMetricsFile: backup -metrics-file writes a textfile that
// Prometheus's parser reads, labelled with the store and the profile; a
// file that cannot be written fails the run on one line after the
// backup was saved and reported; a dry run and -all-profiles are refused.
func TestBackupMetricsFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store := "local:" + filepath.Join(dir, "repo")
	src := filepath.Join(dir, "src")
	mustWrite(t, filepath.Join(src, "a.txt"), "alpha\n")
	mustWrite(t, filepath.Join(src, "b.txt"), "beta\n")
	env := map[string]string{"CLOUDSTIC_STORE": store, "HOME": dir, "CLOUDSTIC_PROFILES_FILE": filepath.Join(dir, "profiles.yaml")}
	mainWith(t, env, "init", "-no-encryption").check(t, cli.ExitOK, nil, nil)
	mainWith(t, env, "store", "new", "-no-prompt", "-name", "main", "-uri", store).check(t, cli.ExitOK, nil, nil)
	mainWith(t, env, "profile", "new", "-no-prompt", "-name", "docs", "-source", "local:"+src, "-store-ref", "main").check(t, cli.ExitOK, nil, nil)
	prom := filepath.Join(dir, "cloudstic.prom")

	for _, tc := range []struct {
		name      string
		args      []string
		code      int
		stderrHas string
		profile   string
		snapshots float64 // after the run; 0: no file expected
		files     float64
	}{
		{name: "plain backup", args: []string{"backup", "-source", "local:" + src, "-metrics-file", prom},
			snapshots: 1, files: 2},
		{name: "profile backup", args: []string{"backup", "-profile", "docs", "-metrics-file", prom},
			profile: "docs", snapshots: 2, files: 0},
		{name: "missing directory", args: []string{"backup", "-source", "local:" + src, "-metrics-file", filepath.Join(dir, "none", "x.prom")},
			code: cli.ExitError, stderrHas: "the backup was saved, but cannot write metrics file"},
		{name: "dry run", args: []string{"backup", "-source", "local:" + src, "-dry-run", "-metrics-file", prom},
			code: cli.ExitUsage, stderrHas: "-metrics-file: a dry run"},
		{name: "all profiles", args: []string{"backup", "-all-profiles", "-metrics-file", prom},
			code: cli.ExitUsage, stderrHas: "-metrics-file applies to one backup"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_ = os.Remove(prom) // absent already when the last run wrote none
			o := mainWith(t, env, tc.args...)
			o.check(t, tc.code, nil, []string{tc.stderrHas})
			if tc.code == cli.ExitError {
				if lines := strings.Count(strings.TrimSpace(o.stderr), "\n") + 1; lines != 1 {
					t.Errorf("stderr has %d lines, want 1:\n%s", lines, o.stderr)
				}
				if !strings.Contains(o.stdout, "saved") {
					t.Errorf("the backup is not reported:\n%s", o.stdout)
				}
			}
			if tc.snapshots == 0 {
				if _, err := os.Stat(prom); err == nil {
					t.Errorf("%s written by a refused run", prom)
				}
				return
			}
			f, err := os.Open(prom)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close() //nolint:errcheck // read only
			fams, err := metrics.Parse(f)
			if err != nil {
				t.Fatalf("parsing %s: %v", prom, err)
			}
			for name, want := range map[string]float64{metrics.LastRunOK: 1, metrics.Snapshots: tc.snapshots,
				metrics.LastFiles: tc.files, metrics.LastLockWait: 0} {
				fam := fams[name]
				if fam == nil || len(fam.GetMetric()) != 1 {
					t.Fatalf("%s: want one series, got %v", name, fam)
				}
				m := fam.GetMetric()[0]
				labels := map[string]string{}
				for _, l := range m.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				if labels["repository"] != store || labels["profile"] != tc.profile {
					t.Errorf("%s labels %v, want repository=%s profile=%q", name, labels, store, tc.profile)
				}
				if got := m.GetGauge().GetValue(); got != want && name != metrics.LastLockWait {
					t.Errorf("%s = %v, want %v", name, got, want)
				}
			}
			if fams[metrics.LastSuccess] == nil || fams[metrics.LastDuration] == nil {
				t.Errorf("no %s or %s", metrics.LastSuccess, metrics.LastDuration)
			}
		})
	}
	// The backup whose metrics file failed was saved nonetheless.
	mainWith(t, env, "list").check(t, cli.ExitOK, []string{"3 snapshots"}, nil)
}
