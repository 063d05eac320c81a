package cli

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// bashComplete runs the bash completion script with COMP_WORDS set to
// words and the cursor on the last word, in `bash --norc`, and returns
// the candidates.
func bashComplete(t *testing.T, script string, env []string, words ...string) []string {
	t.Helper()
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	prog := script + "\nCOMP_WORDS=(" + strings.Join(quoted, " ") + "); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))" +
		"; _cloudstic; printf '%s\\n' \"${COMPREPLY[@]}\"\n"
	cmd := exec.Command("bash", "--norc", "--noprofile", "-c", prog)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	return strings.Fields(string(out))
}

// TestCompatCompletion: the completion of values Cloudstic completes
// that need nothing but the script (store and source URI prefixes, shells,
// the subcommands of store and profile), and Cloudstic's error words
// ("Usage:", "Unsupported shell"). Names from profiles.yaml and snapshot
// ids are tested with the binary in cmd/cloudstic.
func TestCompatCompletion(t *testing.T) {
	script := uxRun(t, "", "completion", "bash").stdout
	tests := []struct {
		words []string
		want  string
	}{
		{[]string{"cloudstic", "list", "-store", ""}, "b2: local: s3: sftp://"},
		{[]string{"cloudstic", "init", "--store", "s"}, "s3: sftp://"},
		{[]string{"cloudstic", "copy", "-from-store", "l"}, "local:"},
		{[]string{"cloudstic", "backup", "-source", ""}, "local: sftp://"},
		{[]string{"cloudstic", "completion", ""}, "bash fish zsh"},
		{[]string{"cloudstic", "store", "v"}, "verify"},
		{[]string{"cloudstic", "profile", ""}, "list new show"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.words, " "), func(t *testing.T) {
			got := bashComplete(t, script, nil, tc.words...)
			if strings.Join(slices.Sorted(slices.Values(got)), " ") != tc.want {
				t.Errorf("candidates %q, want %q", got, tc.want)
			}
		})
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"completion"}, "Usage: cloudstic completion bash|zsh|fish"},
		{[]string{"completion", "tcsh"}, `Unsupported shell "tcsh"`},
	} {
		if r := uxRun(t, "", tc.args...); r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, %q; want %q", tc.args, r.code, r.stderr, tc.want)
		}
	}

	// The hidden helper the scripts call prints nothing, and succeeds,
	// when it has nothing to offer.
	for _, args := range [][]string{{completeCommand}, {completeCommand, "unknown"}, {completeCommand, "snapshots", "-store", "local:/nonexistent"}} {
		if r := uxRun(t, "", args...); r.code != ExitOK || r.stdout != "" || r.stderr != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
}
