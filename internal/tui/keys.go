package tui

import (
	tea "charm.land/bubbletea/v2"
)

// key handles one key press.
func (m *Model) key(k string) tea.Cmd {
	if k == "esc" || k == "ctrl+c" {
		return m.interrupt(k)
	}
	switch m.mode {
	case modeConfirm:
		return m.answer(k)
	case modeSnapshot:
		switch k {
		case "l", "enter", "backspace":
			m.mode = modeBrowse
		case "q":
			return m.quit()
		}
		return nil
	}
	switch k {
	case "up", "k":
		m.move(-1)
		return m.readLocks()
	case "down", "j":
		m.move(1)
		return m.readLocks()
	case "q":
		return m.quit()
	case "l":
		if m.profile() != nil {
			m.mode = modeSnapshot
		}
	case "r":
		return m.refresh()
	case "b":
		return m.offerBackup()
	case "c":
		return m.offerCheck()
	case "f":
		return m.offerForget()
	}
	return nil
}

// interrupt is Esc or Ctrl-C: it closes a question or the snapshot list,
// cancels a run (a second press quits, the run's lock released by its
// cancelled context), and quits otherwise (Ctrl-C).
func (m *Model) interrupt(k string) tea.Cmd {
	switch {
	case m.mode == modeConfirm:
		m.mode = modeBrowse
		m.logf("%s: cancelled", m.confirm.kind)
		return nil
	case m.mode == modeSnapshot:
		m.mode = modeBrowse
		return nil
	case m.run != nil && !m.run.cancelled:
		m.run.cancelled = true
		m.run.cancel()
		m.logf("%s %s: cancelling (press %s again to quit)", m.run.kind, m.run.profile, k)
		return nil
	case m.run != nil, k == "ctrl+c":
		return m.quit()
	}
	return nil
}

// quit ends the program; a run going on is cancelled (Wait waits for it).
func (m *Model) quit() tea.Cmd {
	m.quitting = true
	if m.run != nil {
		m.run.cancelled = true
		m.run.cancel()
	}
	return tea.Quit
}

// move selects the profile delta lines away, within the list.
func (m *Model) move(delta int) {
	n := len(m.cfg.Profiles)
	if n == 0 {
		return
	}
	m.selected = min(max(m.selected+delta, 0), n-1)
}

// answer handles the key after a question: y starts the run.
func (m *Model) answer(k string) tea.Cmd {
	m.mode = modeBrowse
	if k != "y" && k != "Y" {
		m.logf("%s: not confirmed", m.confirm.kind)
		return nil
	}
	return m.start(m.confirm.kind, m.confirm.run)
}

// ask puts a y/N question before a run.
func (m *Model) ask(kind, question string, run Job) tea.Cmd {
	m.mode, m.confirm = modeConfirm, pending{question: question, kind: kind, run: run}
	return nil
}

// busy refuses a second run while one goes on.
func (m *Model) busy() bool {
	if m.run != nil {
		m.logf("a %s is running: wait for it or press Esc to cancel it", m.run.kind)
		return true
	}
	return false
}

// offerBackup backs the selected profile up, or offers init first when
// its store has no repository.
func (m *Model) offerBackup() tea.Cmd {
	p := m.profile()
	if p == nil || m.busy() {
		return nil
	}
	st := m.status[p.Name]
	if st != nil && st.Reachable.OK && st.Initialized.Known && !st.Initialized.OK {
		if p.Init == nil {
			m.logf("%s: the store has no repository, and it cannot be created from here", p.Name)
			return nil
		}
		return m.ask("init", "No repository in the store. Initialize it now (init)? [y/N]", p.Init)
	}
	if p.Backup == nil {
		m.logf("%s: backup is not offered", p.Name)
		return nil
	}
	return m.start("backup", p.Backup)
}

// offerCheck checks the selected profile's repository.
func (m *Model) offerCheck() tea.Cmd {
	p := m.profile()
	if p == nil || m.busy() {
		return nil
	}
	if p.Check == nil {
		m.logf("%s: check is not offered", p.Name)
		return nil
	}
	return m.start("check", p.Check)
}

// offerForget asks before forget+prune by the profile's retention policy.
func (m *Model) offerForget() tea.Cmd {
	p := m.profile()
	if p == nil || m.busy() {
		return nil
	}
	if p.Forget == nil || p.Retention == "" {
		m.logf("%s: no retention policy (keep_* in profiles.yaml): nothing to forget by", p.Name)
		return nil
	}
	return m.ask("forget", "Forget snapshots of "+p.Name+" by its policy ("+p.Retention+") and prune? [y/N]", p.Forget)
}

// refresh re-reads the selected profile's status and locks.
func (m *Model) refresh() tea.Cmd {
	if m.profile() == nil {
		return nil
	}
	return tea.Batch(m.readStatus(m.selected), m.readLocks())
}
