package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeQuickStart runs the README's quick start as written, in a
// fresh working directory with a ~/Documents holding a Work directory:
// every line must succeed (1a2b3c standing for the backup's id).
func TestReadmeQuickStart(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), "## Quick start\n\n")
	if !ok {
		t.Fatal("README has no Quick start section")
	}
	block, _, _ = strings.Cut(block, "\n\n")
	home := t.TempDir()
	uxWrite(t, filepath.Join(home, "Documents", "Work", "report.txt"), "report")
	uxWrite(t, filepath.Join(home, "Documents", "notes.txt"), "notes")
	t.Chdir(t.TempDir())
	env := map[string]string{"HOME": home}
	run := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		code := Main(context.Background(), args, IO{Stdin: bytes.NewReader(nil), Stdout: &out, Stderr: &errb,
			Getenv: func(k string) string { return env[k] }})
		if code != ExitOK {
			t.Fatalf("cloudstic %s: exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errb.String())
		}
		return out.String()
	}
	lines := 0
	for _, line := range strings.Split(block, "\n") {
		cmd, _, _ := strings.Cut(strings.TrimSpace(line), "#")
		args := strings.Fields(cmd)
		if len(args) == 0 || args[0] != "./cloudstic" {
			t.Fatalf("quick start line %q is not a cloudstic command", line)
		}
		args = args[1:]
		for i, a := range args {
			if a == "1a2b3c" {
				var doc listResult
				if err := json.Unmarshal([]byte(run("list", "-json", "-password", "secret")), &doc); err != nil || len(doc.Snapshots) == 0 {
					t.Fatalf("list -json: %v %v", doc, err)
				}
				args[i] = doc.Snapshots[0].ID[:6]
			}
		}
		run(args...)
		lines++
	}
	if lines < 5 {
		t.Fatalf("only %d quick start lines:\n%s", lines, block)
	}
	if _, err := os.Stat("work.zip"); err != nil {
		t.Errorf("the zip restore wrote no work.zip: %v", err)
	}
	if got, err := os.ReadFile(filepath.Join("restored", "Work", "report.txt")); err != nil || string(got) != "report" {
		t.Errorf("restored/Work/report.txt: %q %v", got, err)
	}
}
