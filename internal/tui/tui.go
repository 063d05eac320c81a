package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
)

// releaseWait bounds how long Run waits, after the screen quit, for a
// cancelled run to release its lock.
const releaseWait = 30 * time.Second

// Run shows the screen on the terminal in and out until the user quits
// or ctx ends. A run still going on when the screen quits is cancelled,
// and Run returns once it has released its lock.
func Run(ctx context.Context, cfg Config, in io.Reader, out io.Writer) error {
	m := New(ctx, cfg)
	opts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out)}
	if cfg.NoColor {
		opts = append(opts, tea.WithColorProfile(colorprofile.Ascii))
	}
	_, err := tea.NewProgram(m, opts...).Run()
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseWait)
	defer cancel()
	m.Wait(wctx)
	if err != nil && !errors.Is(err, tea.ErrProgramKilled) {
		return fmt.Errorf("terminal: %w", err)
	}
	return ctx.Err()
}
