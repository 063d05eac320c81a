package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// uxResult is what one in-process command line printed.
type uxResult struct {
	stdout, stderr string
	code           int
}

// uxRun runs the CLI in-process with the store in dir and no environment.
func uxRun(t *testing.T, dir string, args ...string) uxResult {
	t.Helper()
	var out, errb bytes.Buffer
	if dir != "" {
		args = append(args, "-store", "local:"+filepath.Join(dir, "store"))
	}
	code := Main(context.Background(), args, IO{Stdin: bytes.NewReader(nil), Stdout: &out, Stderr: &errb,
		Getenv: func(string) string { return "" }})
	return uxResult{out.String(), errb.String(), code}
}

func TestHelpEveryCommand(t *testing.T) {
	for _, c := range commands() {
		for _, form := range [][]string{{"help", c.name}, {c.name, "-h"}} {
			t.Run(strings.Join(form, " "), func(t *testing.T) {
				r := uxRun(t, "", form...)
				if r.code != ExitOK {
					t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
				}
				if !strings.Contains(r.stdout, "usage: cloudstic "+c.usage) || !strings.Contains(r.stdout, "-store") {
					t.Fatalf("help lacks usage or flags:\n%s", r.stdout)
				}
				if !strings.Contains(r.stdout, "examples:\n  cloudstic ") {
					t.Fatalf("help lacks examples:\n%s", r.stdout)
				}
			})
		}
	}
}

func TestSuggestions(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"bakup"}, `did you mean "backup"?`},
		{[]string{"help", "dif"}, `did you mean "diff"?`},
		{[]string{"ls", "-lx"}, "did you mean -l?"},
		{[]string{"backup", "-sorce", "local:."}, "did you mean -source?"},
		{[]string{"key", "lst"}, `did you mean "list"?`},
		{[]string{"cat", "snapshop", "x"}, `did you mean "snapshot"?`},
		{[]string{"completion", "fisch"}, `did you mean "fish"?`},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			r := uxRun(t, "", c.args...)
			if r.code != ExitUsage || !strings.Contains(r.stderr, c.want) {
				t.Fatalf("exit %d, stderr %q; want exit %d and %q", r.code, r.stderr, ExitUsage, c.want)
			}
		})
	}
}

func TestCompletionScripts(t *testing.T) {
	for _, shell := range completionShells() {
		t.Run(shell, func(t *testing.T) {
			r := uxRun(t, "", "completion", shell)
			if r.code != ExitOK {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			for _, c := range commands() {
				if !strings.Contains(r.stdout, c.name) {
					t.Errorf("script does not mention %q", c.name)
				}
			}
			for _, want := range []string{"-source", "-new-password", "add-recovery", "-json-progress"} {
				if shell == "fish" && strings.HasPrefix(want, "-") {
					want = "-o " + want[1:] // fish: complete -o NAME for single-dash flags
				}
				if !strings.Contains(r.stdout, want) {
					t.Errorf("script does not mention %q", want)
				}
			}
			if shell == "fish" {
				return
			}
			// The bash script (also used by zsh) must parse.
			path := filepath.Join(t.TempDir(), "c.sh")
			if err := os.WriteFile(path, []byte(r.stdout), 0o600); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("bash", "-n", path).CombinedOutput(); err != nil {
				t.Fatalf("bash -n: %v\n%s", err, out)
			}
		})
	}
}

func TestBashCompletionWorks(t *testing.T) {
	script := uxRun(t, "", "completion", "bash").stdout
	cases := []struct {
		words string
		cword int
		want  string
	}{
		{"cloudstic ke", 1, "key"},
		{"cloudstic key add-", 2, "add-recovery"},
		{"cloudstic backup -source-sftp-ke", 2, "-source-sftp-key"},
		{"cloudstic completion z", 2, "zsh"},
		{"cloudstic help res", 2, "restore"},
	}
	for _, c := range cases {
		t.Run(c.words, func(t *testing.T) {
			prog := script + "\nCOMP_WORDS=(" + c.words + "); COMP_CWORD=" + string(rune('0'+c.cword)) +
				"; _cloudstic; echo \"${COMPREPLY[@]}\"\n"
			out, err := exec.Command("bash", "-c", prog).CombinedOutput()
			if err != nil {
				t.Fatalf("bash: %v\n%s", err, out)
			}
			if strings.TrimSpace(string(out)) != c.want {
				t.Fatalf("completion = %q, want %q", out, c.want)
			}
		})
	}
}

func TestParseFlagHelp(t *testing.T) {
	help := "flags:\n  -l\tlong listing\n  -store string\n    \trepository store\n    \tsecond line\n  -quiet\n    \tprint only the summary\n"
	got := parseFlagHelp(help)
	want := []compFlag{{"l", "long listing"}, {"quiet", "print only the summary"}, {"store", "repository store"}}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("flag %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func FuzzParseFlagHelp(f *testing.F) {
	f.Add("  -l\tlong listing\n  -store string\n    \trepository store\n")
	f.Add("  -\n    \t\n  -x")
	f.Fuzz(func(t *testing.T, help string) {
		for _, fl := range parseFlagHelp(help) {
			if strings.ContainsAny(fl.name, " \t\n") {
				t.Fatalf("flag name %q holds a separator", fl.name)
			}
		}
	})
}

func TestHelpHidesSecrets(t *testing.T) {
	env := map[string]string{"CLOUDSTIC_PASSWORD": "pw-secret-1", "CLOUDSTIC_NEW_PASSWORD": "pw-secret-2",
		"AWS_SECRET_ACCESS_KEY": "aws-secret-3", "CLOUDSTIC_RECOVERY_KEY": "words-secret-4"}
	for _, args := range [][]string{{"list", "-h"}, {"key", "-h"}, {"help", "backup"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var out bytes.Buffer
			Main(context.Background(), args, IO{Stdin: bytes.NewReader(nil), Stdout: &out, Stderr: io.Discard,
				Getenv: func(k string) string { return env[k] }})
			for _, v := range env {
				if strings.Contains(out.String(), v) {
					t.Fatalf("help shows the secret %q:\n%s", v, out.String())
				}
			}
		})
	}
}
