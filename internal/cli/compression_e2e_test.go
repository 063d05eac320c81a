package cli_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/cli"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
)

// TestBackupCompression backs up the same log text with every -compression
// value into its own repository, restores it, and compares what each
// stored: off > fast > small, and auto is fast on a local store.
func TestBackupCompression(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	mustWrite(t, filepath.Join(src, "app.log"), logLines(3<<20))
	sizes := map[string]int64{}
	for _, value := range []string{"auto", "fast", "small", "off"} {
		t.Run(value, func(t *testing.T) {
			repo := filepath.Join(dir, "repo-"+value)
			env := map[string]string{"CLOUDSTIC_STORE": "local:" + repo, "CLOUDSTIC_PASSWORD": "pw"}
			mainWith(t, env, "init").check(t, cli.ExitOK, nil, nil)
			mainWith(t, env, "backup", "-source", "local:"+src, "-compression", value).check(t, cli.ExitOK, []string{"saved"}, nil)
			out := filepath.Join(dir, "out-"+value)
			mainWith(t, env, "restore", "latest", "-output", out).check(t, cli.ExitOK, nil, nil)
			want, err := os.ReadFile(filepath.Join(src, "app.log"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(out, "app.log"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("restored %d bytes that differ from the %d backed up", len(got), len(want))
			}
			sizes[value] = checktest.DirSize(t, repo, "data")
		})
	}
	t.Logf("repository data: %v", sizes)
	if !(sizes["off"] > sizes["fast"] && sizes["fast"] > sizes["small"]) {
		t.Errorf("stored sizes %v: want off > fast > small", sizes)
	}
	if d := sizes["auto"] - sizes["fast"]; d < -1024 || d > 1024 {
		t.Errorf("auto stored %d bytes, fast %d: auto is not fast on a local store", sizes["auto"], sizes["fast"])
	}
}

// logLines returns about n bytes of varied log text.
func logLines(n int) string {
	words := []string{"backup", "restore", "snapshot", "chunk", "pack", "index", "tree", "blob", "error", "ok"}
	rng := rand.New(rand.NewPCG(3, 4))
	var b strings.Builder
	for line := 0; b.Len() < n; line++ {
		fmt.Fprintf(&b, "2026-01-01T00:00:%02d line %d", line%60, line)
		for range 8 {
			b.WriteString(" " + words[rng.IntN(len(words))])
		}
		fmt.Fprintf(&b, " value=%d\n", rng.IntN(100000))
	}
	return b.String()
}
