package ui

import (
	"fmt"
	"net/http"
	"strings"
)

// eventStream answers a request with server-sent events; send writes one
// event (its data may span lines).
type eventStream struct {
	w http.ResponseWriter
	f http.Flusher
}

func startEvents(w http.ResponseWriter) (*eventStream, bool) {
	f, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming is not supported here", http.StatusInternalServerError)
		return nil, false
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	f.Flush()
	return &eventStream{w: w, f: f}, true
}

func (e *eventStream) send(event, data string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "event: %s\n", event)
	for _, line := range strings.Split(data, "\n") {
		fmt.Fprintf(&b, "data: %s\n", line)
	}
	b.WriteString("\n")
	if _, err := e.w.Write([]byte(b.String())); err != nil {
		return err
	}
	e.f.Flush()
	return nil
}

// handleLockEvents streams the lock panel, re-read every LockPoll, until
// the browser goes away.
func (s *Server) handleLockEvents(w http.ResponseWriter, r *http.Request) {
	i, ok := s.repoIndex(w, r)
	if !ok {
		return
	}
	ev, ok := startEvents(w)
	if !ok {
		return
	}
	ctx := r.Context()
	for {
		html, err := s.fragment("locks", s.lockPanel(ctx, i))
		if err != nil {
			html = "<p class=\"error\">rendering the lock panel failed</p>"
		}
		if ctx.Err() != nil || ev.send("locks", html) != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-s.cfg.Clock.After(s.cfg.LockPoll):
		}
	}
}

// handleJobEvents streams a job's panel on every change until it ends.
func (s *Server) handleJobEvents(w http.ResponseWriter, r *http.Request) {
	j, ok := s.jobFor(w, r)
	if !ok {
		return
	}
	ev, ok := startEvents(w)
	if !ok {
		return
	}
	ctx := r.Context()
	for {
		v, changed := j.view()
		html, err := s.fragment("job", v)
		if err != nil {
			html = "<p class=\"error\">rendering the job failed</p>"
		}
		if ev.send("job", html) != nil {
			return
		}
		if v.Done {
			_ = ev.send("end", "") // the browser may be gone already: nothing to do
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
	}
}
