package tui

import (
	"charm.land/lipgloss/v2"
)

// styles are the screen's text styles; with NO_COLOR they only bold and
// reverse, never color.
type styles struct {
	title, head, sel, ok, bad, dim, warn lipgloss.Style
	color                                bool
}

func newStyles(noColor bool) styles {
	s := styles{
		title: lipgloss.NewStyle().Bold(true),
		head:  lipgloss.NewStyle().Bold(true),
		sel:   lipgloss.NewStyle().Reverse(true),
		ok:    lipgloss.NewStyle(),
		bad:   lipgloss.NewStyle().Bold(true),
		dim:   lipgloss.NewStyle(),
		warn:  lipgloss.NewStyle().Bold(true),
	}
	if noColor {
		return s
	}
	s.color = true
	s.title = s.title.Foreground(lipgloss.Color("12"))
	s.head = s.head.Foreground(lipgloss.Color("14"))
	s.ok = s.ok.Foreground(lipgloss.Color("10"))
	s.bad = s.bad.Foreground(lipgloss.Color("9"))
	s.dim = s.dim.Foreground(lipgloss.Color("8"))
	s.warn = s.warn.Foreground(lipgloss.Color("11"))
	return s
}
