package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// passwordWarning starts the warning -password on the command line gets.
const passwordWarning = "warning: -password on the command line"

// TestPasswordWarningOnATerminal runs the README's quick start under a
// real terminal (util-linux's script gives the program a pty for stdin,
// stdout and stderr): each command warns once about -password on the
// command line; with stderr redirected to a file (a script's run) there is
// no warning anywhere, and -json's stdout stays one JSON document.
func TestPasswordWarningOnATerminal(t *testing.T) {
	if _, err := exec.LookPath("script"); err != nil {
		if os.Getenv("CLOUDSTIC_TEST_NO_SERVERS") == "1" && os.Getenv("CI") != "true" {
			t.Skip("script (util-linux) is not installed (CLOUDSTIC_TEST_NO_SERVERS=1)")
		}
		t.Fatal("script is not installed: apt-get install util-linux (scripts/test.sh does)")
	}
	dir := t.TempDir()
	installSelf(t, dir)
	if err := os.MkdirAll(filepath.Join(dir, "Documents", "Work"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Documents", "Work", "notes.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "CLOUDSTIC_") {
			env = append(env, e)
		}
	}
	env = append(env, "HOME="+dir, "PATH="+dir+":"+os.Getenv("PATH"), "TERM=dumb")
	tests := []struct {
		name, line string
		want       int    // warnings on the terminal
		file       string // a file the line redirects to, which must hold none
	}{
		{"init", "cloudstic init -password secret", 1, ""},
		{"backup", "cloudstic backup -source ~/Documents -password secret -tag daily", 1, ""},
		{"list", "cloudstic list -password secret", 1, ""},
		{"ls", "cloudstic ls latest Work -password secret", 1, ""},
		{"restore", "cloudstic restore -format dir -output ./restored -password secret", 1, ""},
		{"stderr to a file", "cloudstic list -password secret 2>err.txt", 0, "err.txt"},
		{"stderr to a pipe", "cloudstic list -password secret 2>&1 | cat >piped.txt", 0, "piped.txt"},
		{"json to a file", "cloudstic list -json -password secret >list.json", 1, "list.json"},
		{"quiet", "cloudstic list -quiet -password secret", 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command("script", "-qec", tc.line, "/dev/null")
			cmd.Dir, cmd.Env = dir, env
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", tc.line, err, out)
			}
			if n := strings.Count(string(out), passwordWarning); n != tc.want {
				t.Errorf("%s: %d warnings on the terminal, want %d:\n%s", tc.line, n, tc.want, out)
			}
			if tc.file == "" {
				return
			}
			data, err := os.ReadFile(filepath.Join(dir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(data), passwordWarning) {
				t.Errorf("%s: the warning is in %s:\n%s", tc.line, tc.file, data)
			}
			if strings.HasSuffix(tc.file, ".json") && !json.Valid(data) {
				t.Errorf("%s: %s is not one JSON document:\n%s", tc.line, tc.file, data)
			}
		})
	}
}
