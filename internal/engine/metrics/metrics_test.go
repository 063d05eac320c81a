package metrics_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/metrics"
	dto "github.com/prometheus/client_model/go"
)

// read parses the textfile at path with Prometheus's own parser.
func read(t *testing.T, path string) map[string]*dto.MetricFamily {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close() //nolint:errcheck // read only
	fams, err := metrics.Parse(f)
	if err != nil {
		t.Fatalf("parsing %s: %v", path, err)
	}
	return fams
}

// only is the value of name's one series, whose labels must be l.
func only(t *testing.T, fams map[string]*dto.MetricFamily, name string, l metrics.Labels) (float64, bool) {
	t.Helper()
	fam, ok := fams[name]
	if !ok {
		return 0, false
	}
	if n := len(fam.GetMetric()); n != 1 {
		t.Fatalf("%s has %d series, want 1", name, n)
	}
	m := fam.GetMetric()[0]
	got := map[string]string{}
	for _, p := range m.GetLabel() {
		got[p.GetName()] = p.GetValue()
	}
	if len(got) != 2 || got["repository"] != l.Repository || got["profile"] != l.Profile {
		t.Errorf("%s labels %v, want repository=%q profile=%q", name, got, l.Repository, l.Profile)
	}
	if fam.GetType() != dto.MetricType_GAUGE {
		t.Errorf("%s is a %v, want a gauge", name, fam.GetType())
	}
	return m.GetGauge().GetValue(), true
}

func TestWriteTextfile(t *testing.T) {
	t.Parallel()
	l := metrics.Labels{Repository: "s3:bucket/prefix", Profile: "home"}
	t1 := time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
	t2 := t1.Add(24 * time.Hour)
	ok := metrics.Backup{Labels: l, OK: true, End: t1, Duration: 90 * time.Second, LockWait: 1500 * time.Millisecond,
		BytesAdded: 4096, FilesAdded: 7, Snapshots: 12}
	failed := metrics.Backup{Labels: l, End: t2, Duration: 2 * time.Second, Snapshots: -1}
	other := failed
	other.Profile = "work"
	for _, tc := range []struct {
		name   string
		runs   []metrics.Backup // written in order; the last one is checked
		want   map[string]float64
		absent []string
	}{
		{"success", []metrics.Backup{ok}, map[string]float64{
			metrics.LastSuccess: float64(t1.Unix()), metrics.LastRun: float64(t1.Unix()), metrics.LastRunOK: 1,
			metrics.LastDuration: 90, metrics.LastLockWait: 1.5, metrics.LastBytes: 4096, metrics.LastFiles: 7,
			metrics.Snapshots: 12}, nil},
		{"failure keeps the last success time", []metrics.Backup{ok, failed}, map[string]float64{
			metrics.LastSuccess: float64(t1.Unix()), metrics.LastRun: float64(t2.Unix()), metrics.LastRunOK: 0,
			metrics.LastDuration: 2, metrics.LastLockWait: 0},
			[]string{metrics.LastBytes, metrics.LastFiles, metrics.Snapshots}},
		{"failure with no earlier success", []metrics.Backup{failed}, map[string]float64{
			metrics.LastRun: float64(t2.Unix()), metrics.LastRunOK: 0},
			[]string{metrics.LastSuccess, metrics.LastBytes}},
		{"another profile's success is not this one's", []metrics.Backup{ok, other}, map[string]float64{
			metrics.LastRunOK: 0}, []string{metrics.LastSuccess}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "cloudstic.prom")
			for _, r := range tc.runs {
				if err := metrics.WriteTextfile(path, r); err != nil {
					t.Fatal(err)
				}
			}
			last := tc.runs[len(tc.runs)-1].Labels
			fams := read(t, path)
			for name, want := range tc.want {
				if got, ok := only(t, fams, name, last); !ok || got != want {
					t.Errorf("%s = %v (present: %v), want %v", name, got, ok, want)
				}
			}
			for _, name := range tc.absent {
				if _, ok := fams[name]; ok {
					t.Errorf("%s present, want absent", name)
				}
			}
			if entries, err := os.ReadDir(dir); err != nil || len(entries) != 1 {
				t.Errorf("the directory holds %d entries (%v), want the file alone (no temporary left)", len(entries), err)
			}
		})
	}
}

// TestWriteTextfileMissingDir: a file in a missing directory is an error
// naming it, on one line.
func TestWriteTextfileMissingDir(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "missing", "cloudstic.prom")
	err := metrics.WriteTextfile(path, metrics.Backup{OK: true, End: time.Unix(1, 0), Snapshots: -1})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("error %v, want one wrapping fs.ErrNotExist", err)
	}
	if msg := err.Error(); !strings.Contains(msg, path) || strings.Contains(msg, "\n") {
		t.Errorf("error %q: want one line naming %s", msg, path)
	}
}

func TestWriteRepositories(t *testing.T) {
	t.Parallel()
	up := metrics.Repository{Labels: metrics.Labels{Repository: "local:/srv/a"}, Up: true, Snapshots: 3, Size: 1 << 20,
		Last:  &metrics.Last{End: time.Unix(1000, 0), Duration: 5 * time.Second, BytesAdded: 10, FilesAdded: 2},
		Locks: map[string]int{"shared": 2, "exclusive": 0, "intent": 1}}
	down := metrics.Repository{Labels: metrics.Labels{Repository: "sftp://h/b", Profile: "p"}, Size: -1}
	var sb strings.Builder
	if err := metrics.WriteRepositories(&sb, []metrics.Repository{up, down}); err != nil {
		t.Fatal(err)
	}
	fams, err := metrics.Parse(strings.NewReader(sb.String()))
	if err != nil {
		t.Fatalf("parsing: %v\n%s", err, sb.String())
	}
	for _, tc := range []struct {
		name, repo, kind string
		want             float64
		absent           bool
	}{
		{name: metrics.RepoUp, repo: "local:/srv/a", want: 1},
		{name: metrics.RepoUp, repo: "sftp://h/b", want: 0},
		{name: metrics.Snapshots, repo: "local:/srv/a", want: 3},
		{name: metrics.Snapshots, repo: "sftp://h/b", absent: true},
		{name: metrics.RepoSize, repo: "local:/srv/a", want: 1 << 20},
		{name: metrics.RepoSize, repo: "sftp://h/b", absent: true},
		{name: metrics.LastSuccess, repo: "local:/srv/a", want: 1000},
		{name: metrics.LastDuration, repo: "local:/srv/a", want: 5},
		{name: metrics.LocksHeld, repo: "local:/srv/a", kind: "shared", want: 2},
		{name: metrics.LocksHeld, repo: "local:/srv/a", kind: "intent", want: 1},
		{name: metrics.LocksHeld, repo: "sftp://h/b", kind: "shared", absent: true},
	} {
		t.Run(tc.name+" "+tc.repo+" "+tc.kind, func(t *testing.T) {
			got, ok := find(fams[tc.name], tc.repo, tc.kind)
			switch {
			case tc.absent && ok:
				t.Errorf("present (%v), want absent", got)
			case !tc.absent && (!ok || got != tc.want):
				t.Errorf("= %v (present: %v), want %v", got, ok, tc.want)
			}
		})
	}
}

// find is the value of fam's series of repository repo (and lock kind).
func find(fam *dto.MetricFamily, repo, kind string) (float64, bool) {
	for _, m := range fam.GetMetric() {
		var r, k string
		for _, p := range m.GetLabel() {
			switch p.GetName() {
			case "repository":
				r = p.GetValue()
			case "kind":
				k = p.GetValue()
			}
		}
		if r == repo && k == kind {
			return m.GetGauge().GetValue(), true
		}
	}
	return 0, false
}
