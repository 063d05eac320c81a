// Package completiontest runs the scripts `cloudstic completion` writes in
// the real shells (bash, zsh, fish), as a user's shell would, and returns
// the candidates they offer. Tests of internal/cli and cmd/cloudstic use
// it; nothing else does.
package completiontest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Shells are the shells completion writes scripts for.
func Shells() []string { return []string{"bash", "zsh", "fish"} }

// Need fails t when shell is not installed (scripts/test.sh installs
// them). As the other tests that need a tool, it skips instead only with
// CLOUDSTIC_TEST_NO_SERVERS=1, and never under CI=true.
func Need(t testing.TB, shell string) {
	t.Helper()
	if _, err := exec.LookPath(shell); err != nil {
		if os.Getenv("CLOUDSTIC_TEST_NO_SERVERS") == "1" && os.Getenv("CI") != "true" {
			t.Skipf("%s is not installed (CLOUDSTIC_TEST_NO_SERVERS=1): %v", shell, err)
		}
		t.Fatalf("%s is not installed: apt-get install %s (scripts/test.sh does; or set CLOUDSTIC_TEST_NO_SERVERS=1 to skip): %v",
			shell, shell, err)
	}
}

// Complete runs script, the completion script for shell, in that shell
// with env, completing the command line words (the last one is the word
// under the cursor, "" for a new one), and returns the candidates the
// shell would offer, in the order it printed them. Anything the shell
// prints on stderr fails t.
func Complete(t testing.TB, shell, script string, env []string, words ...string) []string {
	t.Helper()
	Need(t, shell)
	path := filepath.Join(t.TempDir(), "completion."+shell)
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	var cmd *exec.Cmd
	cur := words[len(words)-1]
	switch shell {
	case "bash":
		cmd = exec.Command("bash", "--norc", "--noprofile", "-c", "source "+shQuote(path)+
			"\nCOMP_WORDS=("+shWords(words)+"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _cloudstic; printf '%s\\n' \"${COMPREPLY[@]}\"\n")
	case "zsh":
		// What bashcompinit's _bash_complete does around the function,
		// without the line editor: zsh's compadd then keeps the
		// candidates that start with the word (compgen does not filter).
		cmd = exec.Command("zsh", "-f", "-c", "autoload -U compinit && compinit -D -u\nsource "+shQuote(path)+
			"\n__t() { emulate -L sh; setopt kshglob noshglob braceexpand; COMP_WORDS=("+shWords(words)+
			"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _cloudstic; printf '%s\\n' \"${COMPREPLY[@]}\"; }\n__t\n")
	case "fish":
		line := make([]string, 0, len(words))
		for _, w := range words[:len(words)-1] {
			line = append(line, fishQuote(w))
		}
		line = append(line, cur)
		cmd = exec.Command("fish", "--no-config", "-c", "source "+fishQuote(path)+"; complete -C "+fishQuote(strings.Join(line, " ")))
	default:
		t.Fatalf("no shell %q", shell)
	}
	cmd.Env = env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	// A script error (fish prints one per broken line and goes on) fails
	// the test even when some candidates come out.
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("%s: %v\nstdout: %s\nstderr: %s", shell, err, out, stderr.String())
	}
	var got []string
	for _, line := range strings.Split(string(out), "\n") {
		c, _, _ := strings.Cut(line, "\t") // fish: candidate TAB description
		if c == "" || (shell == "zsh" && !strings.HasPrefix(c, cur)) {
			continue
		}
		got = append(got, c)
	}
	return got
}

func shWords(words []string) string {
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = shQuote(w)
	}
	return strings.Join(quoted, " ")
}

func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
