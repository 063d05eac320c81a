package cli

import (
	"context"
	"errors"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/cloudstic/cloudstic/internal/config"
	"github.com/cloudstic/cloudstic/internal/tui"
)

// `cloudstic tui` is the operator's terminal screen (internal/tui): the
// command line opens nothing itself, it describes each profile of
// profiles.yaml as a tui.Profile whose functions run the typed
// operations in process (tui_profiles.go), and hands them to the screen.

// errNoTerminal is Cloudstic's guardrail for `cloudstic tui` run without
// a terminal, printed as it is (finish).
var errNoTerminal = errors.New("cloudstic tui requires an interactive terminal")

func runTUI(ctx context.Context, a *app, args []string) error {
	fs := a.flags()
	if err := a.parseNoArgs(fs, args); err != nil {
		return err
	}
	in, out, ok := a.terminal()
	if !ok {
		return errNoTerminal
	}
	cfg, err := a.tuiConfig()
	if err != nil {
		return err
	}
	return tui.Run(ctx, cfg, in, out)
}

// tuiConfig describes the enabled profiles of the profiles file for the
// screen.
func (a *app) tuiConfig() (tui.Config, error) {
	f, err := a.loadProfiles()
	if err != nil {
		return tui.Config{}, err
	}
	path, err := config.ProfilesPath(a.g.prof.profilesFile, a.io.Getenv)
	if err != nil {
		return tui.Config{}, err
	}
	cfg := tui.Config{Path: path, NoColor: a.io.Getenv("NO_COLOR") != ""}
	for _, name := range f.ProfileNames() {
		if p := f.Profiles[name]; p.IsEnabled() {
			cfg.Profiles = append(cfg.Profiles, a.tuiProfile(f, path, name, p))
		}
	}
	return cfg, nil
}

// terminal returns standard input and output when both are terminals.
func (a *app) terminal() (io.Reader, io.Writer, bool) {
	in, ok := a.io.Stdin.(*os.File)
	if !ok || !term.IsTerminal(int(in.Fd())) {
		return nil, nil, false
	}
	w := a.io.Stdout
	if rw, ok := w.(*recordingWriter); ok {
		w = rw.w
	}
	out, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(out.Fd())) {
		return nil, nil, false
	}
	return in, out, true
}
