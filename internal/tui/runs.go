package tui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/frontend"
)

// Messages of the runs and reads the screen starts.
type (
	statusMsg struct {
		profile string
		status  Status
	}
	locksMsg struct {
		profile string
		locks   []Lock
		err     string
	}
	lockTickMsg  struct{}
	lockReadMsg  struct{}
	progressMsg  struct{ p operation.Progress }
	logMsg       struct{ line string }
	runDoneMsg   struct{ err error }
	runEventsEnd struct{}
)

// statusTimeout bounds one readiness read: an unreachable store must not
// leave the panel waiting.
const statusTimeout = 30 * time.Second

// runLockDelay is when the lock panel is read after a run starts: once
// it has had time to take its lock.
const runLockDelay = 500 * time.Millisecond

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// readStatus reads profile i's status.
func (m *Model) readStatus(i int) tea.Cmd {
	p := m.cfg.Profiles[i]
	if p.Status == nil {
		return nil
	}
	ctx := m.ctx
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, statusTimeout)
		defer cancel()
		return statusMsg{profile: p.Name, status: p.Status(ctx)}
	}
}

// readLocks reads the locks of the selected profile's repository.
func (m *Model) readLocks() tea.Cmd {
	p := m.profile()
	if p == nil || p.Locks == nil {
		return nil
	}
	ctx, name, list := m.ctx, p.Name, p.Locks
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, statusTimeout)
		defer cancel()
		locks, err := list(ctx)
		if err != nil {
			return locksMsg{profile: name, err: frontend.OneLine(err.Error())}
		}
		return locksMsg{profile: name, locks: locks}
	}
}

// lockTick asks for the next lock refresh (none with a negative
// LockPoll).
func (m *Model) lockTick() tea.Cmd {
	if m.cfg.LockPoll < 0 {
		return nil
	}
	return tea.Tick(m.cfg.LockPoll, func(time.Time) tea.Msg { return lockTickMsg{} })
}

// start runs run of the selected profile in a goroutine of its own; its
// progress, messages and end come back as messages through waitRun.
func (m *Model) start(kind string, run Job) tea.Cmd {
	p := m.profile()
	ctx, cancel := context.WithCancel(m.ctx)
	events := make(chan tea.Msg, 64)
	m.run = &running{kind: kind, profile: p.Name, cancel: cancel, events: events, started: m.cfg.Clock.Now()}
	done, abandon := make(chan struct{}), make(chan struct{})
	m.done, m.abandon = done, abandon
	m.logf("%s %s: started", kind, p.Name)
	// send blocks until the screen takes the event, or it is gone (Wait
	// abandons the events after the program quit).
	send := func(msg tea.Msg) {
		select {
		case events <- msg:
		case <-abandon:
		}
	}
	log := &lineWriter{emit: func(line string) { send(logMsg{line: line}) }}
	go func() {
		defer close(done)
		defer close(events)
		defer cancel()
		err := run(ctx, frontend.RunOutput{
			Progress: func(pr operation.Progress) {
				select { // a progress event may be dropped, never block the run
				case events <- progressMsg{p: pr}:
				default:
				}
			},
			Log: log, Summary: log,
		})
		log.flush()
		send(runDoneMsg{err: err})
	}()
	// The lock panel shows the run's own lock soon, not at the next poll.
	return tea.Batch(m.waitRun(), tea.Tick(runLockDelay, func(time.Time) tea.Msg { return lockReadMsg{} }))
}

// waitRun waits for the next event of the run going on.
func (m *Model) waitRun() tea.Cmd {
	if m.run == nil {
		return nil
	}
	events := m.run.events
	return func() tea.Msg {
		msg, ok := <-events
		if !ok {
			return runEventsEnd{}
		}
		return msg
	}
}

// finished records how the run ended and re-reads the statuses.
func (m *Model) finished(msg runDoneMsg) tea.Cmd {
	r := m.run
	if r == nil {
		return nil
	}
	m.run, m.last = nil, r
	r.took = m.cfg.Clock.Now().Sub(r.started)
	switch {
	case msg.err == nil:
		r.outcome = "done"
		m.logf("%s %s: done", r.kind, r.profile)
	case r.cancelled && errors.Is(msg.err, context.Canceled):
		r.outcome = "cancelled"
		m.logf("%s %s: cancelled; the lock was released", r.kind, r.profile)
	default:
		r.outcome = "failed"
		m.logf("%s %s: failed: %s", r.kind, r.profile, frontend.OneLine(msg.err.Error()))
	}
	if m.quitting {
		return tea.Quit
	}
	// Every profile's status: others may share the store the run changed
	// (an init, a forget).
	cmds := []tea.Cmd{m.readLocks()}
	for i := range m.cfg.Profiles {
		cmds = append(cmds, m.readStatus(i))
	}
	return tea.Batch(cmds...)
}

// lineWriter turns a run's output into activity lines, one per line
// written (runs write from more than one goroutine).
type lineWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	emit func(string)
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for {
		line, err := w.buf.ReadString('\n')
		if err != nil { // no newline yet: keep the rest
			w.buf.Reset()
			w.buf.WriteString(line)
			return len(p), nil
		}
		if s := strings.TrimSpace(line); s != "" {
			w.emit(s)
		}
	}
}

// flush emits what is left without a final newline.
func (w *lineWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if s := strings.TrimSpace(w.buf.String()); s != "" {
		w.emit(s)
	}
	w.buf.Reset()
}
