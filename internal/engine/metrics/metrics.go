// Package metrics defines cloudstic's Prometheus metrics, in one place for
// every front end: the textfile `backup -metrics-file` writes for
// node_exporter's textfile collector, and the dashboard's /metrics page.
// Each write gathers from a private registry made for it: there is no
// global registry and no state between writes.
package metrics

import (
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The metric names (docs/cli.md and docs/ui.md list them).
const (
	LastSuccess   = "cloudstic_backup_last_success_timestamp_seconds"
	LastRun       = "cloudstic_backup_last_run_timestamp_seconds"
	LastRunOK     = "cloudstic_backup_last_run_success"
	LastDuration  = "cloudstic_backup_last_duration_seconds"
	LastBytes     = "cloudstic_backup_last_bytes_added"
	LastFiles     = "cloudstic_backup_last_files_added"
	LastLockWait  = "cloudstic_backup_last_lock_wait_seconds"
	Snapshots     = "cloudstic_repository_snapshots"
	RepoSize      = "cloudstic_repository_size_bytes"
	LocksHeld     = "cloudstic_repository_locks"
	RepoUp        = "cloudstic_repository_up"
	labelRepo     = "repository"
	labelProfile  = "profile"
	labelLockKind = "kind"
)

// help is a metric's HELP text.
func help(name string) string {
	switch name {
	case LastSuccess:
		return "End of the last successful backup, in seconds since the epoch."
	case LastRun:
		return "End of the last backup run, successful or not, in seconds since the epoch."
	case LastRunOK:
		return "1 if the last backup run succeeded, else 0."
	case LastDuration:
		return "Duration of the last backup, in seconds."
	case LastBytes:
		return "Bytes the last backup stored (compressed and sealed)."
	case LastFiles:
		return "Files the last backup found new or changed."
	case LastLockWait:
		return "Seconds the last backup waited for its lock."
	case Snapshots:
		return "Readable snapshots in the repository."
	case RepoSize:
		return "Bytes the repository's snapshots store, as the dashboard's growth plot last counted them."
	case RepoUp:
		return "1 if the repository's snapshots could be listed, else 0."
	case LocksHeld:
		return "Lock objects in the repository, by kind (shared, exclusive, intent)."
	}
	return name
}

// Labels name what a series is about. Repository must hold no secret
// (a store's URI as the dashboard shows it, or its name in the config).
type Labels struct {
	Repository string
	Profile    string
}

// Backup is one backup run as `backup -metrics-file` reports it.
type Backup struct {
	Labels
	// OK: the run saved a snapshot (or found nothing to save).
	OK bool
	// End is when the run ended; Duration and LockWait what it took.
	End      time.Time
	Duration time.Duration
	LockWait time.Duration
	// BytesAdded and FilesAdded are what a successful run stored.
	BytesAdded, FilesAdded int64
	// Snapshots is the repository's count after the run; <0: unknown.
	Snapshots int
}

// Repository is one repository (and profile) as the dashboard reports it.
type Repository struct {
	Labels
	// Up: the snapshots could be listed (else Last and Snapshots are
	// unknown).
	Up bool
	// Last is the newest snapshot's figures; nil: none.
	Last *Last
	// Snapshots is the count of readable snapshots.
	Snapshots int
	// Size is the bytes stored; <0: not counted yet.
	Size int64
	// Locks counts the lock objects by kind; nil: could not be listed.
	Locks map[string]int
}

// Last is what the newest snapshot records of its backup.
type Last struct {
	End        time.Time
	Duration   time.Duration
	BytesAdded int64
	FilesAdded int64
}

// builder registers gauge vectors on a private registry as they are used.
type builder struct {
	reg  *prometheus.Registry
	vecs map[string]*prometheus.GaugeVec
}

func newBuilder() *builder {
	return &builder{reg: prometheus.NewRegistry(), vecs: map[string]*prometheus.GaugeVec{}}
}

// set sets the gauge name of l (and the extra label values) to v.
func (b *builder) set(name string, l Labels, v float64, extra ...string) {
	vec, ok := b.vecs[name]
	if !ok {
		labels := []string{labelRepo, labelProfile}
		if name == LocksHeld {
			labels = append(labels, labelLockKind)
		}
		vec = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help(name)}, labels)
		b.reg.MustRegister(vec) // names are constants, each registered once
		b.vecs[name] = vec
	}
	vec.WithLabelValues(append([]string{l.Repository, l.Profile}, extra...)...).Set(v)
}

func seconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// add sets the series of one backup run. prevSuccess is the last success
// time from an earlier file, kept when this run failed (zero: none).
func (b *builder) add(r Backup, prevSuccess float64) {
	ok := 0.0
	if r.OK {
		ok = 1
	}
	b.set(LastRun, r.Labels, seconds(r.End))
	b.set(LastRunOK, r.Labels, ok)
	b.set(LastDuration, r.Labels, r.Duration.Seconds())
	b.set(LastLockWait, r.Labels, r.LockWait.Seconds())
	switch {
	case r.OK:
		b.set(LastSuccess, r.Labels, seconds(r.End))
		b.set(LastBytes, r.Labels, float64(r.BytesAdded))
		b.set(LastFiles, r.Labels, float64(r.FilesAdded))
	case prevSuccess > 0:
		b.set(LastSuccess, r.Labels, prevSuccess)
	}
	if r.Snapshots >= 0 {
		b.set(Snapshots, r.Labels, float64(r.Snapshots))
	}
}

// WriteTextfile writes run to path in node_exporter's textfile format,
// atomically: a temporary file in the same directory, renamed over path.
// When the run failed, the last success time of the file it replaces
// (same labels) is kept, so that an alert on its age keeps working.
func WriteTextfile(path string, run Backup) error {
	b := newBuilder()
	b.add(run, previousSuccess(path, run.Labels))
	if err := prometheus.WriteToTextfile(path, b.reg); err != nil {
		return fmt.Errorf("cannot write metrics file %s: %w", path, err)
	}
	return nil
}

// maxPreviousFile bounds what previousSuccess reads of an existing file.
const maxPreviousFile = 1 << 20

// previousSuccess reads the last success time of labels l from an
// existing textfile; 0 when there is none or it cannot be read (a
// missing or foreign file is no error: the run is reported regardless).
func previousSuccess(path string, l Labels) float64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close() //nolint:errcheck // read only
	// A textfile of ours is a few KiB: a larger file is not ours to read whole.
	fams, err := Parse(io.LimitReader(f, maxPreviousFile))
	if err != nil {
		return 0
	}
	fam, ok := fams[LastSuccess]
	if !ok {
		return 0
	}
	for _, m := range fam.GetMetric() {
		if labelsOf(m) == l {
			return m.GetGauge().GetValue()
		}
	}
	return 0
}

func labelsOf(m *dto.Metric) Labels {
	var l Labels
	for _, p := range m.GetLabel() {
		switch p.GetName() {
		case labelRepo:
			l.Repository = p.GetValue()
		case labelProfile:
			l.Profile = p.GetValue()
		}
	}
	return l
}

// Parse reads metrics in Prometheus's text format with Prometheus's own
// parser, by metric name.
func Parse(r io.Reader) (map[string]*dto.MetricFamily, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(r)
}

// WriteRepositories writes the dashboard's metrics of repos to w in
// Prometheus's text format.
func WriteRepositories(w io.Writer, repos []Repository) error {
	b := newBuilder()
	for _, r := range repos {
		up := 0.0
		if r.Up {
			up = 1
			b.set(Snapshots, r.Labels, float64(r.Snapshots))
		}
		b.set(RepoUp, r.Labels, up)
		if r.Last != nil {
			b.set(LastSuccess, r.Labels, seconds(r.Last.End))
			b.set(LastDuration, r.Labels, r.Last.Duration.Seconds())
			b.set(LastBytes, r.Labels, float64(r.Last.BytesAdded))
			b.set(LastFiles, r.Labels, float64(r.Last.FilesAdded))
		}
		if r.Size >= 0 {
			b.set(RepoSize, r.Labels, float64(r.Size))
		}
		if r.Locks != nil {
			kinds := make([]string, 0, len(r.Locks))
			for k := range r.Locks {
				kinds = append(kinds, k)
			}
			sort.Strings(kinds)
			for _, k := range kinds {
				b.set(LocksHeld, r.Labels, float64(r.Locks[k]), k)
			}
		}
	}
	fams, err := b.reg.Gather()
	if err != nil {
		return fmt.Errorf("gathering metrics: %w", err)
	}
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range fams {
		if err := enc.Encode(f); err != nil {
			return fmt.Errorf("writing metrics: %w", err)
		}
	}
	return nil
}

// ContentType is the Content-Type of WriteRepositories' output.
func ContentType() string { return string(expfmt.NewFormat(expfmt.TypeTextPlain)) }
