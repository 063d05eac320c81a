package ui

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/frontend"
)

// maxLogLines bounds the log lines a job keeps (the last ones).
const maxLogLines = 200

// job is one run started from the page: a profile's backup, forget+prune
// or check, or a restore.
type job struct {
	id, title string
	repo      int
	started   time.Time

	mu       sync.Mutex
	progress *operation.Progress
	log      []string
	summary  bytes.Buffer
	err      string
	done     bool
	changed  chan struct{} // closed and replaced on every change
}

// jobView is a job as its panel shows it.
type jobView struct {
	ID, Title string
	Repo      int
	Started   time.Time
	Progress  *operation.Progress
	Percent   int // of bytes (or files) when the total is known, else -1
	Rate, ETA string
	Log       []string
	Summary   string
	Err       string
	Done      bool
}

// view returns the job's state and a channel closed at its next change.
func (j *job) view() (jobView, <-chan struct{}) {
	j.mu.Lock()
	defer j.mu.Unlock()
	v := jobView{ID: j.id, Title: j.title, Repo: j.repo, Started: j.started, Log: append([]string(nil), j.log...),
		Summary: j.summary.String(), Err: j.err, Done: j.done, Percent: -1}
	if j.progress != nil {
		p := *j.progress
		v.Progress = &p
		if p.BytesPerSecond > 0 {
			v.Rate = frontend.HumanBytes(int64(p.BytesPerSecond)) + "/s"
		}
		if p.ETASeconds >= 0 && p.Type == "progress" {
			v.ETA = (time.Duration(p.ETASeconds) * time.Second).String()
		}
		switch {
		case p.BytesTotal > 0:
			v.Percent = int(min(100, p.BytesDone*100/p.BytesTotal))
		case p.FilesTotal > 0:
			v.Percent = int(min(100, p.FilesDone*100/p.FilesTotal))
		}
	}
	return v, j.changed
}

// update changes the job under its lock and wakes its watchers.
func (j *job) update(fn func()) {
	j.mu.Lock()
	defer j.mu.Unlock()
	fn()
	close(j.changed)
	j.changed = make(chan struct{})
}

// setProgress takes a progress event of the run.
func (j *job) setProgress(p operation.Progress) {
	j.update(func() { j.progress = &p })
}

// line takes one line of the run's messages.
func (j *job) line(l string) {
	j.update(func() {
		j.log = append(j.log, l)
		if len(j.log) > maxLogLines {
			j.log = j.log[len(j.log)-maxLogLines:]
		}
	})
}

// lineWriter splits what is written into lines for job.line.
type lineWriter struct {
	j   *job
	mu  sync.Mutex
	buf []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		w.j.line(strings.TrimRight(string(w.buf[:i]), "\r"))
		w.buf = w.buf[i+1:]
	}
}

// flush passes on a last line without a newline.
func (w *lineWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.j.line(string(w.buf))
		w.buf = nil
	}
}

// summaryWriter appends to the job's summary.
type summaryWriter struct{ j *job }

func (w summaryWriter) Write(p []byte) (int, error) {
	w.j.update(func() { w.j.summary.Write(p) })
	return len(p), nil
}

// summaryf appends a formatted line to the job's summary.
func (j *job) summaryf(format string, args ...any) {
	j.update(func() { fmt.Fprintf(&j.summary, format, args...) })
}

// startJob runs fn in the background under the server's context (Ctrl-C
// on the command line cancels it), reporting to the job, and returns the
// job.
func (s *Server) startJob(title string, repo int, fn func(ctx context.Context, j *job, out frontend.RunOutput) error) (*job, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	j := &job{id: hex.EncodeToString(b), title: title, repo: repo, started: s.cfg.Clock.Now(), changed: make(chan struct{})}
	s.mu.Lock()
	s.jobs[j.id] = j
	s.mu.Unlock()
	go func() {
		lw := &lineWriter{j: j}
		err := fn(s.ctx, j, frontend.RunOutput{Progress: j.setProgress, Log: lw, Summary: summaryWriter{j: j}})
		lw.flush()
		j.update(func() {
			j.done = true
			if err != nil {
				j.err = frontend.OneLine(err.Error())
			}
		})
	}()
	return j, nil
}

// jobFor returns the job the request names, or answers 404.
func (s *Server) jobFor(w http.ResponseWriter, r *http.Request) (*job, bool) {
	s.mu.Lock()
	j, ok := s.jobs[r.PathValue("job")]
	s.mu.Unlock()
	if !ok {
		s.errorPage(w, r, http.StatusNotFound, "Not found", "There is no such run.")
	}
	return j, ok
}

func (s *Server) handleJob(w http.ResponseWriter, r *http.Request) {
	j, ok := s.jobFor(w, r)
	if !ok {
		return
	}
	v, _ := j.view()
	s.render(w, r, http.StatusOK, "job", pageData{Title: v.Title, Repo: s.view(v.Repo), Data: v})
}

// handleRun starts one of a repository's actions.
func (s *Server) handleRun(w http.ResponseWriter, r *http.Request) {
	i, ok := s.repoIndex(w, r)
	if !ok {
		return
	}
	var act *frontend.Action
	for k, a := range s.cfg.Repos[i].Actions {
		if a.Name == r.PathValue("action") {
			act = &s.cfg.Repos[i].Actions[k]
		}
	}
	switch {
	case act == nil:
		s.errorPage(w, r, http.StatusNotFound, "Not found", "This repository offers no such run.")
		return
	case act.Writes && s.cfg.ReadOnly:
		s.errorPage(w, r, http.StatusForbidden, "Read-only", "The dashboard was started with -read-only: it runs nothing that writes.")
		return
	}
	run := act.Run
	j, err := s.startJob(act.Label, i, func(ctx context.Context, _ *job, out frontend.RunOutput) error {
		return run(ctx, out)
	})
	if err != nil {
		s.errorPage(w, r, http.StatusInternalServerError, "Error", frontend.OneLine(err.Error()))
		return
	}
	http.Redirect(w, r, "/jobs/"+j.id, http.StatusSeeOther)
}
