package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/progress"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/frontend"
)

// Key lines of the modes, the last line of the screen.
const (
	keysBrowse   = "↑/↓ j/k select  b backup  c check  f forget+prune  l snapshots  q quit"
	keysRunning  = "Esc/Ctrl-C cancel the run (twice: quit)  ↑/↓ j/k select  l snapshots  q quit"
	keysConfirm  = "y confirm  n/Esc cancel"
	keysSnapshot = "l/Esc back  q quit"
)

// View draws the screen in the alternate screen buffer.
func (m *Model) View() tea.View {
	v := tea.NewView(m.Render())
	v.AltScreen = true
	return v
}

// Render draws the screen as text, every line cut to the terminal's
// width and the whole to its height.
func (m *Model) Render() string {
	var lines []string
	if m.mode == modeSnapshot {
		lines = m.snapshotLines()
	} else {
		lines = m.mainLines()
	}
	keys := keysBrowse
	switch {
	case m.mode == modeConfirm:
		keys = keysConfirm
	case m.mode == modeSnapshot:
		keys = keysSnapshot
	case m.run != nil:
		keys = keysRunning
	}
	h := max(m.height, 3)
	if len(lines) > h-1 {
		lines = lines[:h-1]
	}
	for len(lines) < h-1 {
		lines = append(lines, "")
	}
	lines = append(lines, m.st.dim.Render(keys))
	w := max(m.width, 20)
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, w, "…")
	}
	return strings.Join(lines, "\n")
}

// mainLines are the title, the profile list, the selected profile's
// panel, the lock panel, the run and the recent activity.
func (m *Model) mainLines() []string {
	title := "cloudstic tui"
	if m.cfg.Path != "" {
		title += " — " + m.cfg.Path
	}
	lines := []string{m.st.title.Render(title), m.st.head.Render("PROFILES")}
	if len(m.cfg.Profiles) == 0 {
		lines = append(lines, "  no profiles: add one with `cloudstic profile new`")
	}
	lines = append(lines, m.profileLines()...)
	lines = append(lines, m.detailLines()...)
	lines = append(lines, m.lockLines()...)
	lines = append(lines, m.runLines()...)
	lines = append(lines, m.st.head.Render("ACTIVITY"))
	room := max(m.height-1-len(lines), 1)
	act := m.activity
	if len(act) > room {
		act = act[len(act)-room:]
	}
	for _, a := range act {
		lines = append(lines, "  "+a)
	}
	return lines
}

// profileLines list the profiles, a window around the selected one when
// they do not all fit a third of the screen.
func (m *Model) profileLines() []string {
	n := len(m.cfg.Profiles)
	room := max(m.height/3-1, 2)
	first := 0
	if n > room {
		first = min(max(m.selected-room/2, 0), n-room)
	}
	var lines []string
	width := 8
	for _, p := range m.cfg.Profiles {
		width = max(width, min(len(p.Name), 24))
	}
	for i := first; i < min(n, first+room); i++ {
		p := m.cfg.Profiles[i]
		mark, ready := "  ", m.readiness(p.Name)
		line := fmt.Sprintf("%-*s  %s", width, ansi.Truncate(p.Name, width, "…"), ready)
		if i == m.selected {
			mark = "> "
			line = m.st.sel.Render(line)
		}
		lines = append(lines, mark+line)
	}
	return lines
}

// readiness sums a profile's status up in a few words.
func (m *Model) readiness(name string) string {
	s := m.status[name]
	switch {
	case s == nil:
		return m.st.dim.Render("checking…")
	case !s.Reachable.OK:
		return m.st.bad.Render("✗ store unreachable")
	case !s.Initialized.OK:
		return m.st.warn.Render("✗ not initialized (b offers init)")
	case !s.Credentials.OK:
		return m.st.bad.Render("✗ credentials missing")
	case s.Auth.Known && !s.Auth.OK:
		return m.st.bad.Render("✗ auth missing")
	}
	ready := m.st.ok.Render("✓ ready")
	if n := len(s.Snapshots); n > 0 {
		ready += fmt.Sprintf("  %d snapshots, latest %s", n, s.Snapshots[n-1].Time.Local().Format("2006-01-02 15:04"))
	}
	return ready
}

// detailLines describe the selected profile.
func (m *Model) detailLines() []string {
	p := m.profile()
	if p == nil {
		return nil
	}
	auth := p.Auth
	if auth == "" {
		auth = "none needed"
	}
	lines := []string{
		m.st.head.Render("PROFILE " + p.Name),
		"  Source  " + p.Source,
		"  Store   " + p.Store,
		"  Auth    " + auth,
	}
	s := m.status[p.Name]
	if s == nil {
		return append(lines, "  Checks  reading…", "  Latest  -")
	}
	checks := []string{m.check("store reachable", s.Reachable), m.check("initialized", s.Initialized),
		m.check("credentials", s.Credentials), m.check("auth", s.Auth)}
	lines = append(lines, "  Checks  "+strings.Join(checks, "  "))
	for _, r := range []Readiness{s.Reachable, s.Initialized, s.Credentials, s.Auth} {
		if r.Known && !r.OK && r.Note != "" {
			lines = append(lines, "          "+m.st.bad.Render(r.Note))
			break
		}
	}
	latest := "  Latest  none yet"
	if n := len(s.Snapshots); n > 0 {
		sn := s.Snapshots[n-1]
		latest = fmt.Sprintf("  Latest  %s  %s  %d files, %s  (%d snapshots)", sn.ID,
			sn.Time.Local().Format("2006-01-02 15:04:05"), sn.Files, frontend.HumanBytes(sn.Bytes), n)
	}
	return append(lines, latest)
}

// check draws one readiness check.
func (m *Model) check(name string, r Readiness) string {
	switch {
	case !r.Known:
		return m.st.dim.Render("– " + name)
	case r.OK:
		return m.st.ok.Render("✓ " + name)
	}
	return m.st.bad.Render("✗ " + name)
}

// lockLines are the lock panel: who holds the selected profile's
// repository and until when.
func (m *Model) lockLines() []string {
	p := m.profile()
	if p == nil {
		return nil
	}
	if e := m.lockErr[p.Name]; e != "" {
		return []string{"  Locks   " + m.st.dim.Render("unknown: "+e)}
	}
	locks := m.locks[p.Name]
	if len(locks) == 0 {
		return []string{"  Locks   none"}
	}
	var lines []string
	for i, l := range locks {
		kind := "exclusive"
		if l.Shared {
			kind = "shared"
		}
		label := "  Locks   "
		if i > 0 {
			label = "          "
		}
		lines = append(lines, fmt.Sprintf("%s%s %s by %s until %s (%s)", label, kind, l.Operation, l.Holder,
			l.Expires.Local().Format("15:04:05"), l.State))
		if i == 2 && len(locks) > 3 {
			lines = append(lines, fmt.Sprintf("          and %d more", len(locks)-3))
			break
		}
	}
	return lines
}

// runLines are the question asked, or the run going on with its
// progress bar, rate and ETA.
func (m *Model) runLines() []string {
	if m.mode == modeConfirm {
		return []string{m.st.warn.Render("  " + m.confirm.question)}
	}
	r := m.run
	var head string
	switch {
	case r != nil:
		head = fmt.Sprintf("  Running %s %s, %s", r.kind, r.profile, m.cfg.Clock.Now().Sub(r.started).Round(time.Second))
		if r.cancelled {
			head += " — cancelling…"
		}
	case m.last != nil:
		r = m.last
		head = fmt.Sprintf("  Last run: %s %s %s in %s", r.kind, r.profile, r.outcome, r.took.Round(100*time.Millisecond))
	default:
		return nil
	}
	lines := []string{m.st.warn.Render(head)}
	if r.progress != nil {
		lines = append(lines, "  "+m.bar(*r.progress))
	}
	return lines
}

// bar is the progress bar with its numbers.
func (m *Model) bar(p operation.Progress) string {
	frac, known := 0.0, false
	switch {
	case p.BytesTotal > 0:
		frac, known = float64(p.BytesDone)/float64(p.BytesTotal), true
	case p.FilesTotal > 0:
		frac, known = float64(p.FilesDone)/float64(p.FilesTotal), true
	}
	unit := p.Unit
	if unit == "" {
		unit = "files"
	}
	nums := fmt.Sprintf(" %d", p.FilesDone)
	if p.FilesTotal > 0 {
		nums += fmt.Sprintf("/%d", p.FilesTotal)
	}
	nums += " " + unit
	if p.BytesDone > 0 || p.BytesTotal > 0 {
		nums += "  " + frontend.HumanBytes(p.BytesDone) + "  " + frontend.HumanBytes(int64(p.BytesPerSecond)) + "/s"
	}
	if p.ETASeconds >= 0 && known {
		nums += "  ETA " + (time.Duration(p.ETASeconds) * time.Second).String()
	}
	pct := "  ?%"
	if known {
		pct = fmt.Sprintf("%3.0f%%", min(frac, 1)*100)
	}
	w := max(m.width-ansi.StringWidth(nums)-10, 10)
	var bar string
	if m.st.color {
		bar = progress.New(progress.WithoutPercentage(), progress.WithWidth(w), progress.WithFillCharacters('█', '░')).ViewAs(min(frac, 1))
	} else { // NO_COLOR: the same bar, no escape sequence
		full := int(min(frac, 1) * float64(w))
		bar = strings.Repeat("█", full) + strings.Repeat("░", w-full)
	}
	return bar + " " + pct + nums
}

// snapshotLines list the selected profile's snapshots, newest first.
func (m *Model) snapshotLines() []string {
	p := m.profile()
	lines := []string{m.st.title.Render("Snapshots of " + p.Name), m.st.head.Render(fmt.Sprintf("  %-8s  %-19s  %-16s  %7s  %9s  %s", "ID", "TIME", "HOST", "FILES", "SIZE", "TAGS"))}
	s := m.status[p.Name]
	if s == nil || len(s.Snapshots) == 0 {
		return append(lines, "  no snapshots yet")
	}
	for i := len(s.Snapshots) - 1; i >= 0; i-- {
		sn := s.Snapshots[i]
		lines = append(lines, fmt.Sprintf("  %-8s  %-19s  %-16s  %7d  %9s  %s", sn.ID, sn.Time.Local().Format("2006-01-02 15:04:05"),
			ansi.Truncate(sn.Host, 16, "…"), sn.Files, frontend.HumanBytes(sn.Bytes), strings.Join(sn.Tags, ",")))
	}
	return lines
}
