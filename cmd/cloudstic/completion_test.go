package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/cli"
	"github.com/cloudstic/cloudstic/internal/cli/completiontest"
)

// asBinaryEnv makes this test binary run main(): the completion scripts
// call the program they complete (`cloudstic __complete ...`), and the
// test gives them this binary under a wrapper.
const asBinaryEnv = "CLOUDSTIC_TEST_AS_BINARY"

func TestMain(m *testing.M) {
	if os.Getenv(asBinaryEnv) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// installSelf writes dir/cloudstic, a wrapper that runs this test binary
// as the program (asBinaryEnv).
func installSelf(t *testing.T, dir string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	wrapper := "#!/bin/sh\n" + asBinaryEnv + "=1 exec '" + self + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "cloudstic"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestCompletionValues: the completion scripts, run in bash, zsh and fish
// (completiontest), complete -profile, -store-ref and -auth-ref with
// the names in profiles.yaml (also one named by -profiles-file), store and
// profile names after `store show` and `profile show`, and snapshot ids
// (and latest) of the repository the command line names.
func TestCompletionValues(t *testing.T) {
	dir := t.TempDir()
	installSelf(t, dir)
	profiles := filepath.Join(dir, "profiles.yaml")
	other := filepath.Join(dir, "other.yaml")
	write := func(path, s string) {
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	store := "local:" + filepath.Join(dir, "repo")
	write(profiles, "version: 1\nstores:\n  nas: {uri: \""+store+"\"}\n  bucket: {uri: \"s3:b\"}\n"+
		"auth:\n  work-drive: {provider: google}\nprofiles:\n  docs: {source: \"local:/d\", store: nas}\n  photos: {source: \"local:/p\", store: nas}\n")
	write(other, "version: 1\nprofiles:\n  elsewhere: {source: \"local:/e\"}\n")

	run := func(args ...string) string {
		var out, errb bytes.Buffer
		code := cli.Main(context.Background(), args, cli.IO{Stdin: bytes.NewReader(nil), Stdout: &out, Stderr: &errb,
			Getenv: func(string) string { return "" }})
		if code != cli.ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		return out.String()
	}
	src := filepath.Join(dir, "src")
	write(filepath.Join(dir, "f"), "x")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	run("init", "-no-encryption", "-store", store)
	run("backup", "-source", "local:"+src, "-store", store)
	run("backup", "-source", "local:"+src, "-store", store)
	var ids []string
	for _, line := range strings.Split(run("list", "-store", store), "\n") {
		if cols := strings.Split(line, "|"); len(cols) > 3 && strings.TrimSpace(cols[1]) != "SEQ" {
			ids = append([]string{strings.TrimSpace(cols[3])[:8]}, ids...) // newest first
		}
	}
	if len(ids) != 2 {
		t.Fatalf("list shows %d snapshots, want 2", len(ids))
	}

	// The program is found on PATH as cloudstic, as a user's is.
	env := append(os.Environ(), "CLOUDSTIC_PROFILES_FILE="+profiles, "HOME="+dir, "PATH="+dir+":"+os.Getenv("PATH"))
	prog := "cloudstic"
	tests := []struct {
		words []string
		want  []string
	}{
		{[]string{prog, "backup", "-profile", ""}, []string{"docs", "photos"}},
		{[]string{prog, "backup", "-profile", "p"}, []string{"photos"}},
		{[]string{prog, "list", "-profiles-file", other, "-profile", ""}, []string{"elsewhere"}},
		{[]string{prog, "copy", "-from-profile", "d"}, []string{"docs"}},
		{[]string{prog, "profile", "new", "-store-ref", ""}, []string{"bucket", "nas"}},
		{[]string{prog, "profile", "new", "-auth-ref", "w"}, []string{"work-drive"}},
		{[]string{prog, "store", "verify", ""}, []string{"bucket", "nas"}},
		{[]string{prog, "profile", "show", ""}, []string{"docs", "photos"}},
		{[]string{prog, "restore", "-store", store, ""}, append([]string{"latest"}, ids...)},
		{[]string{prog, "diff", ids[1], "-store", store, ids[0][:3]}, ids[:1]},
		{[]string{prog, "ls", "-profile", "docs", ""}, append([]string{"latest"}, ids...)},
	}
	for _, shell := range completiontest.Shells() {
		script := run("completion", shell)
		for _, tc := range tests {
			t.Run(shell+" "+strings.Join(tc.words[1:], " "), func(t *testing.T) {
				got := completiontest.Complete(t, shell, script, env, tc.words...)
				if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(tc.want))) {
					t.Errorf("candidates %q, want %q", got, tc.want)
				}
			})
		}
	}
}
