package operation

import (
	"sync"
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/check"
	"github.com/cloudstic/cloudstic/internal/engine/prune"
	"github.com/cloudstic/cloudstic/internal/engine/restore"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
)

// ProgressInterval is how often a Reporter reads a running operation's
// counters.
const ProgressInterval = 200 * time.Millisecond

// Progress is one reading of a running operation: what the command line
// draws as its status line or writes as a -json-progress line
// (docs/cli.md, "Progress"), and what the web dashboard shows of a run.
type Progress struct {
	// Type is "progress" while the operation runs and "done" for the
	// last event of it.
	Type string `json:"type"`
	// Op is "backup", "restore", "check" or "prune".
	Op             string  `json:"op"`
	ElapsedSeconds float64 `json:"elapsed_seconds"`
	FilesDone      int64   `json:"files_done"`
	FilesTotal     int64   `json:"files_total"` // 0 while unknown
	BytesDone      int64   `json:"bytes_done"`
	BytesTotal     int64   `json:"bytes_total"` // 0 while unknown
	BytesPerSecond float64 `json:"bytes_per_second"`
	ETASeconds     float64 `json:"eta_seconds"` // -1 while unknown
	// Current is the file being read (backup), from the source.
	Current string `json:"current,omitempty"`
	// Unit names what FilesDone counts: "files", "packs" (check) or
	// "objects" (prune). The JSON lines keep the files_* names.
	Unit string `json:"-"`
}

// Reporter turns the counters of a running operation into Progress
// events. Its methods are the begin functions of Backup, Restore, Check
// and the prune step of Prune and Forget; a nil Reporter reports nothing.
type Reporter struct {
	// Emit gets each event, from one goroutine at a time: one every
	// Interval while the operation runs, and a last one of type "done".
	Emit func(Progress)
	// Clock times the events (default clock.Real).
	Clock clock.Clock
	// Interval is the time between events (default ProgressInterval).
	Interval time.Duration
}

// reading is one reading of an engine's counters; totals are 0 while
// unknown.
type reading struct {
	files, filesTotal int64
	bytes, bytesTotal int64
	current           string
}

// Backup sets opts.Progress and reports the backup's progress until the
// function it returns is called. The totals come from a concurrent
// metadata-only scan of a local source (see scanTotals); nothing is added
// to the engine's hot path, which only updates atomic counters.
func (p *Reporter) Backup(opts *backup.Options) (end func()) {
	if p == nil || p.Emit == nil {
		return func() {}
	}
	prog := &backup.Progress{}
	opts.Progress = prog
	var tot scanTotals
	stopScan := make(chan struct{})
	scanDone := make(chan struct{})
	source := *opts // the scan's own copy
	go func() {
		defer close(scanDone)
		tot.scan(&source, stopScan)
	}()
	stop := p.start("backup", "files", func() reading {
		s := reading{files: prog.Files.Load(), bytes: prog.Bytes.Load()}
		if tot.complete.Load() {
			s.filesTotal, s.bytesTotal = tot.files.Load(), tot.bytes.Load()
		}
		if c, ok := prog.CurrentFile.Load().(string); ok {
			s.current = c
		}
		return s
	})
	return func() {
		close(stopScan)
		<-scanDone
		stop()
	}
}

// Restore sets opts.Progress and reports the restore's progress until the
// function it returns is called. The totals are the snapshot's summary's
// when the whole snapshot is restored, unknown for a path of it.
func (p *Reporter) Restore(snap snapshot.WithID, opts *restore.Options) (end func()) {
	if p == nil || p.Emit == nil {
		return func() {}
	}
	var files, bytes int64
	if opts.Path == "" {
		files, bytes = snap.Summary.FilesTotal, snap.Summary.BytesTotal
	}
	prog := &restore.Progress{}
	opts.Progress = prog
	return p.start("restore", "files", func() reading {
		return reading{files: prog.Files.Load(), filesTotal: files, bytes: prog.Bytes.Load(), bytesTotal: bytes}
	})
}

// Check sets opts.Progress and reports the pack phase of check until the
// function it returns is called.
func (p *Reporter) Check(opts *check.Options) (end func()) {
	if p == nil || p.Emit == nil {
		return func() {}
	}
	prog := &check.Progress{}
	opts.Progress = prog
	return p.start("check", "packs", func() reading {
		return reading{files: prog.Packs.Load(), filesTotal: prog.PacksTotal.Load(),
			bytes: prog.Bytes.Load(), bytesTotal: prog.BytesTotal.Load()}
	})
}

// Prune sets opts.Progress and reports the repack and delete phases of
// prune until the function it returns is called.
func (p *Reporter) Prune(opts *prune.Options) (end func()) {
	if p == nil || p.Emit == nil {
		return func() {}
	}
	prog := &prune.Progress{}
	opts.Progress = prog
	return p.start("prune", "objects", func() reading {
		return reading{files: prog.Objects.Load(), filesTotal: prog.ObjectsTotal.Load(),
			bytes: prog.Bytes.Load(), bytesTotal: prog.BytesTotal.Load()}
	})
}

// start emits an event of op every interval until stop is called, which
// emits the last one, of type "done", before it returns.
func (p *Reporter) start(op, unit string, sample func() reading) (stop func()) {
	clk := p.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	every := p.Interval
	if every <= 0 {
		every = ProgressInterval
	}
	begun := clk.Mono()
	var rate rateWindow
	event := func(typ string) Progress {
		s := sample()
		elapsed := clk.Mono() - begun
		bps := rate.add(elapsed, s.bytes)
		return Progress{Type: typ, Op: op, Unit: unit, ElapsedSeconds: elapsed.Seconds(),
			FilesDone: s.files, FilesTotal: s.filesTotal, BytesDone: s.bytes, BytesTotal: s.bytesTotal,
			BytesPerSecond: bps, ETASeconds: eta(s.bytes, s.bytesTotal, bps).Seconds(), Current: s.current}
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			case <-clk.After(every):
				p.Emit(event("progress"))
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(quit)
			<-done
			p.Emit(event("done"))
		})
	}
}

// eta is the time left to reach total at rate, or -1s when it cannot be
// told.
func eta(done, total int64, rate float64) time.Duration {
	if total <= 0 || rate <= 0 {
		return -time.Second
	}
	left := max(0, total-done)
	return time.Duration(float64(left) / rate * float64(time.Second))
}

// rateWindow measures the byte rate over the last few seconds.
type rateWindow struct {
	at    [25]time.Duration
	bytes [25]int64
	n     int
}

// add records a reading and returns the rate in bytes per second over the
// window (the average since the start until the window fills).
func (r *rateWindow) add(at time.Duration, bytes int64) float64 {
	i := r.n % len(r.at)
	oldest := 0
	if r.n >= len(r.at) {
		oldest = i
	}
	oldAt, oldBytes := r.at[oldest], r.bytes[oldest]
	if r.n == 0 {
		oldAt, oldBytes = 0, 0
	}
	r.at[i], r.bytes[i] = at, bytes
	r.n++
	if dt := (at - oldAt).Seconds(); dt > 0 {
		return float64(bytes-oldBytes) / dt
	}
	return 0
}
