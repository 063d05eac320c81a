package tui

import (
	"context"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
)

// maxActivity is how many lines of recent activity are kept.
const maxActivity = 50

// mode is what the screen shows and what the keys do.
type mode int

const (
	modeBrowse   mode = iota // the profile list and panels
	modeConfirm              // a y/N question about a run
	modeSnapshot             // the snapshot list of the selected profile
)

// pending is a run waiting for its confirmation.
type pending struct {
	question string
	kind     string // "backup", "init", "forget"
	run      Job
}

// running is the run going on, at most one at a time.
type running struct {
	kind, profile string
	cancel        context.CancelFunc
	events        chan tea.Msg
	cancelled     bool
	progress      *operation.Progress
	started       time.Time
	// outcome is how it ended ("done", "failed", "cancelled"), once it has.
	outcome string
	took    time.Duration
}

// Model is the screen's state. Its methods implement tea.Model; tests
// call Update and View directly.
type Model struct {
	cfg      Config
	ctx      context.Context
	width    int
	height   int
	selected int
	mode     mode
	confirm  pending
	status   map[string]*Status
	locks    map[string][]Lock
	lockErr  map[string]string
	activity []string
	run      *running
	last     *running // the run that ended last, shown until the next one
	quitting bool
	// done is closed by a run's goroutine when it ends, so that the
	// program can wait for its lock to be released after quitting.
	done chan struct{}
	// abandon, closed by Wait, tells the run's goroutine that nobody
	// reads its events any more.
	abandon chan struct{}
	st      styles
}

// New returns the screen for cfg; runs stop when ctx ends.
func New(ctx context.Context, cfg Config) *Model {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.LockPoll == 0 {
		cfg.LockPoll = 2 * time.Second
	}
	return &Model{cfg: cfg, ctx: ctx, width: 80, height: 24, status: map[string]*Status{},
		locks: map[string][]Lock{}, lockErr: map[string]string{}, st: newStyles(cfg.NoColor)}
}

// Init reads every profile's status and the selected one's locks.
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{m.lockTick()}
	for i := range m.cfg.Profiles {
		cmds = append(cmds, m.readStatus(i))
	}
	return tea.Batch(append(cmds, m.readLocks())...)
}

// Update handles one message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		return m, nil
	case tea.KeyPressMsg:
		return m, m.key(msg.String())
	case statusMsg:
		s := msg.status
		m.status[msg.profile] = &s
		return m, nil
	case locksMsg:
		m.locks[msg.profile], m.lockErr[msg.profile] = msg.locks, msg.err
		return m, nil
	case lockTickMsg:
		return m, tea.Batch(m.readLocks(), m.lockTick())
	case lockReadMsg:
		return m, m.readLocks()
	case progressMsg:
		if m.run != nil {
			p := msg.p
			m.run.progress = &p
		}
		return m, m.waitRun()
	case logMsg:
		m.logf("%s", msg.line)
		return m, m.waitRun()
	case runDoneMsg:
		return m, m.finished(msg)
	}
	return m, nil
}

// Wait blocks until the run going on (if any) has ended, or ctx does:
// after the program quits, its lock is released before the process exits.
func (m *Model) Wait(ctx context.Context) {
	if m.run == nil || m.done == nil {
		return
	}
	m.run.cancel()
	close(m.abandon)
	m.run = nil // Wait once
	select {
	case <-m.done:
	case <-ctx.Done():
	}
}

// logf adds a line to the recent activity, stamped with the time.
func (m *Model) logf(format string, args ...any) {
	line := m.cfg.Clock.Now().Format("15:04:05") + " " + sprintf(format, args...)
	m.activity = append(m.activity, line)
	if len(m.activity) > maxActivity {
		m.activity = m.activity[len(m.activity)-maxActivity:]
	}
}

// profile returns the selected profile.
func (m *Model) profile() *Profile {
	if len(m.cfg.Profiles) == 0 {
		return nil
	}
	return &m.cfg.Profiles[m.selected]
}
