package ui

import (
	"encoding/json"
	"net/http"
)

// eventStream answers a request with server-sent events; send writes one
// event.
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

// send writes one event whose data is payload as a JSON string, on one
// "data:" line. The payload is HTML holding store data (a lock's holder,
// file names), and html/template leaves a carriage return in it: written
// raw, a CR or LF would end the line and start a new field or event (the
// event stream format ends lines at either). JSON escapes both, and U+2028
// and U+2029 too; the page's script decodes the string with JSON.parse.
// event is one of the names below, never data.
func (e *eventStream) send(event, payload string) error {
	data, err := json.Marshal(payload)
	if err != nil {
		return err // cannot happen: any string marshals
	}
	msg := append([]byte("event: "+event+"\ndata: "), data...)
	if _, err := e.w.Write(append(msg, "\n\n"...)); err != nil {
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
