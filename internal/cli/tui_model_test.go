package cli

import (
	"context"
	"crypto/rand"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
	"github.com/cloudstic/cloudstic/internal/tui"
)

// tuiFixture is the screen of `cloudstic tui` over a temporary
// profiles.yaml: docs (keep_last 1) and plain (no policy) back up two
// sources into one local store, not initialized yet.
type tuiFixture struct {
	m        *tui.Model
	store    string
	password string
}

func newTUIFixture(t *testing.T, noColor bool) *tuiFixture {
	t.Helper()
	dir := t.TempDir()
	docs, plain := filepath.Join(dir, "docs"), filepath.Join(dir, "plain")
	big := make([]byte, 16<<20) // enough that a cancelled backup is still running
	if _, err := rand.Read(big); err != nil {
		t.Fatal(err)
	}
	mustWriteTUI(t, filepath.Join(docs, "big.bin"), string(big))
	mustWriteTUI(t, filepath.Join(docs, "notes.txt"), "notes\n")
	mustWriteTUI(t, filepath.Join(plain, "p.txt"), "plain\n")
	fx := &tuiFixture{store: "local:" + filepath.Join(dir, "repo"), password: "tui-model-pw"}
	profiles := filepath.Join(dir, "profiles.yaml")
	mustWriteTUI(t, profiles, "version: 1\nstores:\n  nas: {uri: \""+fx.store+"\", password_secret: \"env://TUI_PW\"}\n"+
		"profiles:\n  docs: {source: \"local:"+docs+"\", store: nas, keep_last: 1}\n  plain: {source: \"local:"+plain+"\", store: nas}\n")
	env := map[string]string{"TUI_PW": fx.password, "HOME": dir, "XDG_CACHE_HOME": filepath.Join(dir, "cache")}
	if !noColor {
		env["NO_COLOR"] = ""
	} else {
		env["NO_COLOR"] = "1"
	}
	ctx := context.Background()
	a := &app{io: IO{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Getenv: func(k string) string { return env[k] },
		secretEnv: &nameSet{}, warned: &nameSet{}}, cmd: &command{name: "tui"}, ctx: ctx}
	if err := a.parseNoArgs(a.flags(), []string{"-profiles-file", profiles}); err != nil {
		t.Fatal(err)
	}
	cfg, err := a.tuiConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.LockPoll = -1 // the test refreshes by hand (r, runs)
	fx.m = tui.New(ctx, cfg)
	fx.m.Update(tea.WindowSizeMsg{Width: 200, Height: 100}) // room for every activity line
	fx.drain(t, fx.m.Init())
	return fx
}

func mustWriteTUI(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// keyMsg is the key press tmux or a terminal would send for k.
func keyMsg(k string) tea.KeyPressMsg {
	switch k {
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEsc}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	}
	r := []rune(k)[0]
	return tea.KeyPressMsg{Code: r, Text: k}
}

// drain runs cmd and every command its messages lead to, feeding their
// messages to the model, until none is left; it reports whether one of
// them quit the program.
func (fx *tuiFixture) drain(t *testing.T, cmd tea.Cmd) (quit bool) {
	t.Helper()
	queue := []tea.Cmd{cmd}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		switch msg := c().(type) {
		case nil:
		case tea.BatchMsg:
			queue = append(queue, msg...)
		case tea.QuitMsg:
			quit = true
		default:
			_, next := fx.m.Update(msg)
			queue = append(queue, next)
		}
	}
	return quit
}

// press sends the keys; with run, it drains what the last one started.
func (fx *tuiFixture) press(t *testing.T, run bool, keys ...string) (quit bool) {
	t.Helper()
	var cmds []tea.Cmd
	for _, k := range keys {
		_, cmd := fx.m.Update(keyMsg(k))
		cmds = append(cmds, cmd)
	}
	if run {
		return fx.drain(t, tea.Batch(cmds...))
	}
	if len(cmds) == 0 {
		return false
	}
	last := cmds[len(cmds)-1]
	return last != nil && isQuit(last)
}

// isQuit reports whether cmd quits (tea.Quit returns no I/O-bound
// message, so running it is harmless).
func isQuit(cmd tea.Cmd) bool {
	_, ok := cmd().(tea.QuitMsg)
	return ok
}

func (fx *tuiFixture) screen() string { return ansi.Strip(fx.m.Render()) }

// TestTUIModel drives the screen through every key and state, in order,
// on a real local store: each step's keys, then what the screen shows.
func TestTUIModel(t *testing.T) {
	fx := newTUIFixture(t, true)
	steps := []struct {
		name string
		keys []string
		run  bool // drain what the keys started (a run, a read)
		want []string
		not  []string
	}{
		{"profiles listed, store not initialized", nil, false, []string{"PROFILES", "> docs", "plain", "✗ not initialized (b offers init)", "Store   nas (" + fx.store + ")", "Locks   none"}, nil},
		{"j selects the next profile", []string{"j"}, true, []string{"> plain", "PROFILE plain"}, []string{"> docs"}},
		{"k selects the previous one", []string{"k"}, true, []string{"> docs", "PROFILE docs"}, nil},
		{"down and up select too", []string{"down", "up"}, true, []string{"> docs"}, nil},
		{"k at the top stays", []string{"k"}, true, []string{"> docs"}, nil},
		{"c on no repository fails", []string{"c"}, true, []string{"check docs: failed: repository not initialized"}, nil},
		{"b offers init", []string{"b"}, false, []string{"No repository in the store. Initialize it now (init)? [y/N]", "y confirm  n/Esc cancel"}, nil},
		{"n declines", []string{"n"}, false, []string{"init: not confirmed"}, []string{"[y/N]"}},
		{"Esc declines too", []string{"b", "esc"}, false, []string{"init: cancelled"}, []string{"[y/N]"}},
		{"y initializes", []string{"b", "y"}, true, []string{"init docs: done", "> docs      ✓ ready", "✓ credentials", "Latest  none yet"}, nil},
		{"f asks first", []string{"f"}, false, []string{"Forget snapshots of docs by its policy (keep-last 1) and prune? [y/N]"}, nil},
		{"f declined", []string{"n"}, false, []string{"forget: not confirmed"}, nil},
		{"b backs up", []string{"b"}, true, []string{"backup docs: done", "Last run: backup docs done", "100% 2/2 files", "(1 snapshots)", "saved"}, nil},
		{"a second backup, the policy applied", []string{"b"}, true, []string{"1 snapshots have been removed", "(1 snapshots)"}, nil},
		{"l lists the profile's snapshots", []string{"l"}, false, []string{"Snapshots of docs", "ID        TIME", "l/Esc back  q quit"}, []string{"PROFILES"}},
		{"l goes back", []string{"l"}, false, []string{"PROFILES"}, nil},
		{"Esc leaves the list too", []string{"l", "esc"}, false, []string{"PROFILES"}, []string{"Snapshots of"}},
		{"f y forgets by the policy and prunes", []string{"f", "y"}, true, []string{"forget docs: done", "(1 snapshots)"}, nil},
		{"c checks clean", []string{"c"}, true, []string{"check docs: done", "No errors found", "Last run: check docs done"}, nil},
		{"plain has no policy: f refuses", []string{"j", "f"}, false, []string{"plain: no retention policy"}, []string{"[y/N]"}},
		{"plain's snapshots are its own", []string{"l"}, false, []string{"Snapshots of plain", "no snapshots yet"}, nil},
		{"back to docs", []string{"l", "k"}, true, []string{"> docs"}, nil},
		{"Esc cancels a backup, the lock released", []string{"b", "esc"}, true, []string{"backup docs: cancelling (press esc again to quit)", "backup docs: cancelled; the lock was released", "Last run: backup docs cancelled", "Locks   none"}, nil},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			fx.press(t, s.run, s.keys...)
			scr := fx.screen()
			for _, w := range s.want {
				if !strings.Contains(scr, w) {
					t.Errorf("the screen lacks %q:\n%s", w, scr)
				}
			}
			for _, w := range s.not {
				if strings.Contains(scr, w) {
					t.Errorf("the screen shows %q:\n%s", w, scr)
				}
			}
		})
	}
	t.Run("the lock panel names who holds the repository", func(t *testing.T) {
		r, err := operation.Open(context.Background(), operation.Options{Store: operation.StoreOptions{URI: fx.store},
			Credentials: func(context.Context) (repo.Credentials, error) { return repo.Credentials{Password: fx.password}, nil }})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = r.Close() }()
		// A listing of docs' snapshot holds a shared lock named tui-test
		// while it calls back, once per entry: look at the panel once.
		looked := false
		_, err = operation.List(context.Background(), r, "tui-test", "latest", nil, func(string, *tree.Node) error {
			if looked {
				return nil
			}
			looked = true
			fx.press(t, true, "r")
			if scr := fx.screen(); !strings.Contains(scr, "Locks   shared tui-test by ") || !strings.Contains(scr, "(live)") {
				t.Errorf("the lock panel does not show the lock:\n%s", scr)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !looked {
			t.Fatal("the listing of docs' snapshot gave no entry: the panel was not looked at")
		}
		fx.press(t, true, "r")
		if scr := fx.screen(); !strings.Contains(scr, "Locks   none") {
			t.Errorf("the released lock is still shown:\n%s", scr)
		}
	})
	t.Run("80x24 fits", func(t *testing.T) {
		fx.m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
		lines := strings.Split(fx.screen(), "\n")
		if len(lines) != 24 {
			t.Errorf("%d lines, want 24", len(lines))
		}
		for _, l := range lines {
			if w := ansi.StringWidth(l); w > 80 {
				t.Errorf("a line of %d columns: %q", w, l)
			}
		}
		if last := lines[len(lines)-1]; !strings.HasSuffix(last, "q quit") {
			t.Errorf("the key line is cut: %q", last)
		}
	})
	t.Run("q quits", func(t *testing.T) {
		if !fx.press(t, false, "q") {
			t.Error("q did not quit")
		}
	})
}

// TestTUIQuitKeys: Ctrl-C quits when nothing runs; during a run the
// first Esc or Ctrl-C cancels it and the second quits, and Wait returns
// once the cancelled run has ended; NO_COLOR draws no color.
func TestTUIQuitKeys(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup []string // keys pressed and drained first
		keys  []string
		quits []bool // whether each of keys quits
	}{
		{"ctrl+c with nothing running", nil, []string{"ctrl+c"}, []bool{true}},
		{"esc with nothing running", nil, []string{"esc"}, []bool{false}},
		{"ctrl+c twice during a run", []string{"b", "y"}, []string{"b", "ctrl+c", "ctrl+c"}, []bool{false, false, true}},
		{"esc twice during a run", []string{"b", "y"}, []string{"b", "esc", "esc"}, []bool{false, false, true}},
		{"q during a run", []string{"b", "y"}, []string{"b", "q"}, []bool{false, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx := newTUIFixture(t, true)
			if len(tc.setup) > 0 {
				fx.press(t, true, tc.setup...)
			}
			for i, k := range tc.keys {
				_, cmd := fx.m.Update(keyMsg(k))
				if got := cmd != nil && isQuit(cmd); got != tc.quits[i] {
					t.Errorf("%s: quit = %v, want %v", k, got, tc.quits[i])
				}
			}
			fx.m.Wait(context.Background())
		})
	}
	t.Run("NO_COLOR", func(t *testing.T) {
		for _, noColor := range []bool{true, false} {
			fx := newTUIFixture(t, noColor)
			colored := strings.Contains(fx.m.Render(), "\x1b[3") || strings.Contains(fx.m.Render(), "\x1b[9")
			if colored == noColor {
				t.Errorf("NO_COLOR %v: colored %v", noColor, colored)
			}
		}
	})
}

// TestTUINeedsTerminal: without a terminal, `cloudstic tui` prints
// Cloudstic's guardrail and exits 1, whatever the profiles file.
func TestTUINeedsTerminal(t *testing.T) {
	for _, args := range [][]string{{"tui"}, {"tui", "-profiles-file", filepath.Join(t.TempDir(), "none.yaml")}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var stdout, stderr strings.Builder
			code := Main(context.Background(), args, IO{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr})
			if code != ExitError || stderr.String() != "cloudstic tui requires an interactive terminal\n" || stdout.Len() != 0 {
				t.Errorf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
			}
		})
	}
}
