package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/term"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/check"
	"github.com/cloudstic/cloudstic/internal/engine/exclude"
	"github.com/cloudstic/cloudstic/internal/engine/prune"
	"github.com/cloudstic/cloudstic/internal/engine/restore"
	"github.com/cloudstic/cloudstic/internal/source/local"
	"github.com/cloudstic/cloudstic/internal/termtext"
)

// progressInterval is how often the status line is redrawn.
const progressInterval = 200 * time.Millisecond

// progressSample is one reading of a long command's counters. Totals are
// zero while unknown.
type progressSample struct {
	Files, FilesTotal int64
	Bytes, BytesTotal int64
	Current           string
	// Unit names what Files counts on the status line ("files" when empty;
	// "packs" for check, "objects" for prune). JSON lines keep files_*.
	Unit string
}

// progressLine is one JSON line of -json-progress (see docs/cli.md).
type progressLine struct {
	Type           string  `json:"type"` // "progress" or "done"
	Op             string  `json:"op"`
	ElapsedSeconds float64 `json:"elapsed_seconds"`
	FilesDone      int64   `json:"files_done"`
	FilesTotal     int64   `json:"files_total"`
	BytesDone      int64   `json:"bytes_done"`
	BytesTotal     int64   `json:"bytes_total"`
	BytesPerSecond float64 `json:"bytes_per_second"`
	ETASeconds     float64 `json:"eta_seconds"` // -1 while unknown
	Current        string  `json:"current,omitempty"`
}

// progress redraws one status line on a terminal, or writes JSON lines,
// from a sample function that only reads atomic counters.
type progress struct {
	op     string
	sample func() progressSample
	json   bool
	fd     int // terminal fd, for the width
	start  time.Time
	rate   rateWindow

	mu    sync.Mutex // guards out and drawn
	out   io.Writer  // the real stderr
	drawn bool       // a status line is on screen

	stop, done chan struct{}
}

// startProgress starts a renderer for op when progress is wanted: with
// -json-progress, or on a terminal stderr unless -quiet or -json. It
// returns nil otherwise. While it runs, a.io.Stderr clears the status
// line before other output (warnings), so lines never mix.
func (a *app) startProgress(op string, sample func() progressSample) *progress {
	p := &progress{op: op, sample: sample, json: a.g.jsonProgress, out: a.io.Stderr, start: time.Now(),
		stop: make(chan struct{}), done: make(chan struct{})}
	if !p.json {
		f, ok := a.io.Stderr.(*os.File)
		if a.g.quiet || a.g.json || !ok || !term.IsTerminal(int(f.Fd())) {
			return nil
		}
		p.fd = int(f.Fd())
		a.io.Stderr = clearingWriter{p}
	}
	go p.loop()
	return p
}

// finish stops the renderer, clears the status line (or writes the final
// JSON line) and gives a its stderr back. Safe on nil.
func (p *progress) finish(a *app) {
	if p == nil {
		return
	}
	close(p.stop)
	<-p.done
	if cw, ok := a.io.Stderr.(clearingWriter); ok && cw.p == p {
		a.io.Stderr = p.out
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.json {
		p.writeJSONLine("done")
		return
	}
	p.clearLocked()
}

func (p *progress) loop() {
	defer close(p.done)
	t := time.NewTicker(progressInterval)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.mu.Lock()
			if p.json {
				p.writeJSONLine("progress")
			} else {
				p.drawLocked()
			}
			p.mu.Unlock()
		}
	}
}

func (p *progress) writeJSONLine(typ string) {
	s := p.sample()
	elapsed := time.Since(p.start)
	rate := p.rate.add(elapsed, s.Bytes)
	line := progressLine{Type: typ, Op: p.op, ElapsedSeconds: elapsed.Seconds(), FilesDone: s.Files, FilesTotal: s.FilesTotal,
		BytesDone: s.Bytes, BytesTotal: s.BytesTotal, BytesPerSecond: rate, ETASeconds: eta(s, rate).Seconds(), Current: s.Current}
	if line.ETASeconds < 0 {
		line.ETASeconds = -1
	}
	data, err := json.Marshal(line)
	if err != nil {
		return // cannot happen: the line holds only numbers and strings
	}
	//nolint:errcheck // progress output is best effort; a broken stderr must not fail the backup
	p.out.Write(append(termtext.JSON(data), '\n'))
}

func (p *progress) drawLocked() {
	width := 80
	if w, _, err := term.GetSize(p.fd); err == nil && w > 20 {
		width = w
	}
	s := p.sample()
	elapsed := time.Since(p.start)
	line := statusLine(p.op, s, elapsed, p.rate.add(elapsed, s.Bytes), width-1)
	//nolint:errcheck // progress output is best effort
	io.WriteString(p.out, "\r\x1b[2K"+line)
	p.drawn = true
}

func (p *progress) clearLocked() {
	if p.drawn {
		//nolint:errcheck // progress output is best effort
		io.WriteString(p.out, "\r\x1b[2K")
		p.drawn = false
	}
}

// clearingWriter clears the status line before other stderr output; the
// next tick redraws it below.
type clearingWriter struct{ p *progress }

func (c clearingWriter) Write(b []byte) (int, error) {
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	c.p.clearLocked()
	return c.p.out.Write(b)
}

// statusLine formats the terminal status line, at most width runes:
// "backup 0:42 1,234/5,000 files 1.2 GiB/3.4 GiB 35%  58.0 MiB/s ETA 0:40 path".
func statusLine(op string, s progressSample, elapsed time.Duration, rate float64, width int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s", op, clockString(elapsed), countOf(s.Files, s.FilesTotal))
	unit := s.Unit
	if unit == "" {
		unit = "files"
	}
	b.WriteString(" " + unit + " " + humanBytes(s.Bytes))
	if s.BytesTotal > 0 {
		b.WriteString("/" + humanBytes(s.BytesTotal))
		fmt.Fprintf(&b, " %d%%", min(100, s.Bytes*100/s.BytesTotal))
	}
	fmt.Fprintf(&b, "  %s/s", humanBytes(int64(rate)))
	if d := eta(s, rate); d >= 0 {
		b.WriteString(" ETA " + clockString(d))
	}
	line := []rune(b.String())
	if len(line) > width {
		return string(line[:width])
	}
	if room := width - len(line) - 2; s.Current != "" && room >= 8 {
		cur := []rune(termtext.Safe(s.Current)) // a file name from the source
		if len(cur) > room {
			cur = append([]rune("…"), cur[len(cur)-room+1:]...)
		}
		return string(line) + "  " + string(cur)
	}
	return string(line)
}

func countOf(done, total int64) string {
	if total > 0 {
		return fmt.Sprintf("%d/%d", done, total)
	}
	return fmt.Sprint(done)
}

// eta is the time left at rate, or -1 when it cannot be told.
func eta(s progressSample, rate float64) time.Duration {
	if s.BytesTotal <= 0 || rate <= 0 {
		return -1
	}
	left := max(0, s.BytesTotal-s.Bytes)
	return time.Duration(float64(left) / rate * float64(time.Second))
}

func clockString(d time.Duration) string {
	sec := int64(d.Round(time.Second) / time.Second)
	if sec >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", sec/3600, sec/60%60, sec%60)
	}
	return fmt.Sprintf("%d:%02d", sec/60, sec%60)
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

// backupProgress sets opts.Progress and starts the renderer (and a
// concurrent stat-only scan of the source for the totals) when progress is
// wanted; the returned function stops both. Nothing is added to the
// engine's hot path: the renderer only reads its atomic counters.
func (a *app) backupProgress(opts *backup.Options) func() {
	if !a.progressWanted() {
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
	p := a.startProgress("backup", func() progressSample {
		s := progressSample{Files: prog.Files.Load(), Bytes: prog.Bytes.Load()}
		if tot.complete.Load() {
			s.FilesTotal, s.BytesTotal = tot.files.Load(), tot.bytes.Load()
		}
		if c, ok := prog.CurrentFile.Load().(string); ok {
			s.Current = c
		}
		return s
	})
	return func() {
		close(stopScan)
		<-scanDone
		p.finish(a)
	}
}

// restoreProgress sets opts.Progress and starts the renderer when progress
// is wanted. files and bytes are the totals when known (0 otherwise).
func (a *app) restoreProgress(opts *restore.Options, files, bytes int64) func() {
	if !a.progressWanted() {
		return func() {}
	}
	prog := &restore.Progress{}
	opts.Progress = prog
	p := a.startProgress("restore", func() progressSample {
		return progressSample{Files: prog.Files.Load(), FilesTotal: files, Bytes: prog.Bytes.Load(), BytesTotal: bytes}
	})
	return func() { p.finish(a) }
}

// checkProgress sets opts.Progress and starts the renderer for the pack
// phase of check when progress is wanted.
func (a *app) checkProgress(opts *check.Options) func() {
	if !a.progressWanted() {
		return func() {}
	}
	prog := &check.Progress{}
	opts.Progress = prog
	p := a.startProgress("check", func() progressSample {
		return progressSample{Files: prog.Packs.Load(), FilesTotal: prog.PacksTotal.Load(),
			Bytes: prog.Bytes.Load(), BytesTotal: prog.BytesTotal.Load(), Unit: "packs"}
	})
	return func() { p.finish(a) }
}

// pruneProgress sets opts.Progress and starts the renderer for the repack
// and delete phases of prune when progress is wanted.
func (a *app) pruneProgress(opts *prune.Options) func() {
	if !a.progressWanted() {
		return func() {}
	}
	prog := &prune.Progress{}
	opts.Progress = prog
	p := a.startProgress("prune", func() progressSample {
		return progressSample{Files: prog.Objects.Load(), FilesTotal: prog.ObjectsTotal.Load(),
			Bytes: prog.Bytes.Load(), BytesTotal: prog.BytesTotal.Load(), Unit: "objects"}
	})
	return func() { p.finish(a) }
}

// progressWanted says whether startProgress would render anything.
func (a *app) progressWanted() bool {
	if a.g.jsonProgress {
		return true
	}
	f, ok := a.io.Stderr.(*os.File)
	return !a.g.quiet && !a.g.json && ok && term.IsTerminal(int(f.Fd()))
}

// scanTotals counts the regular files and bytes below a backup source.
type scanTotals struct {
	files, bytes atomic.Int64
	complete     atomic.Bool
}

// scan walks the source of opts with lstat only, leaving out what the
// backup leaves out (the same exclude.Filter), until done or stop is
// closed. Errors are ignored: the backup reports them. Only a local
// source of one directory is scanned: listing a remote tree twice would
// cost the backup more than the totals are worth.
func (t *scanTotals) scan(opts *backup.Options, stop <-chan struct{}) {
	if opts.Stream != nil {
		return // a stream's length is not known ahead
	}
	if _, isLocal := opts.Source.(local.Source); (opts.Source != nil && !isLocal) || len(opts.Paths) > 0 {
		return
	}
	root, err := filepath.Abs(opts.Path)
	if err != nil {
		return
	}
	if root, err = filepath.EvalSymlinks(root); err != nil { // the backup follows a source given as a link
		return
	}
	fi, err := os.Lstat(root)
	if err != nil {
		return
	}
	filter, err := exclude.NewFilter(opts.ExcludeRules(), local.New(), fi)
	if err != nil {
		return
	}
	//nolint:errcheck // errors end or skip the count only; the backup itself reports unreadable entries
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		select {
		case <-stop:
			return filepath.SkipAll
		default:
		}
		if err != nil || p == root {
			return nil
		}
		rel, _ := filepath.Rel(root, p) // p is below root
		dec, info, err := filter.Entry(context.Background(), filepath.Dir(p), filepath.ToSlash(rel), d)
		switch {
		case err != nil || dec == exclude.Skip:
			if d.IsDir() {
				return filepath.SkipDir
			}
		case dec == exclude.KeepEmpty:
			return filepath.SkipDir
		case d.Type().IsRegular():
			t.files.Add(1)
			t.bytes.Add(info.Size())
		}
		return nil
	})
	t.complete.Store(true)
}
