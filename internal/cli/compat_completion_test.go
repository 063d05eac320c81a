package cli

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/cli/completiontest"
)

// TestCompatCompletion: the completion of values Cloudstic completes
// that need nothing but the script, in bash, zsh and fish run for real (store and source URI prefixes, shells,
// the subcommands of store and profile), and Cloudstic's error words
// ("Usage:", "Unsupported shell"). Names from profiles.yaml and snapshot
// ids are tested with the binary in cmd/cloudstic.
func TestCompatCompletion(t *testing.T) {
	env := append(os.Environ(), "HOME="+t.TempDir())
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
	for _, shell := range completiontest.Shells() {
		script := uxRun(t, "", "completion", shell).stdout
		for _, tc := range tests {
			t.Run(shell+" "+strings.Join(tc.words, " "), func(t *testing.T) {
				got := completiontest.Complete(t, shell, script, env, tc.words...)
				if strings.Join(slices.Sorted(slices.Values(got)), " ") != tc.want {
					t.Errorf("candidates %q, want %q", got, tc.want)
				}
			})
		}
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
