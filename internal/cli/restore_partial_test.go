package cli_test

import (
	"crypto/rand"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudstic/cloudstic/internal/cli"
)

// TestRestorePartialExitCode: a restore that gives back all but the files
// it lists (here one whose pack is damaged) exits 3, as a backup that
// could not read some files does, naming each; with -json its document
// lists them and no second document follows.
func TestRestorePartialExitCode(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src, repoDir := filepath.Join(dir, "src"), filepath.Join(dir, "repo")
	env := map[string]string{"CLOUDSTIC_STORE": "local:" + repoDir, "CLOUDSTIC_PASSWORD": "pw", "HOME": dir}
	mustWrite(t, filepath.Join(src, "a.txt"), "kept\n")
	mainWith(t, env, "init").check(t, cli.ExitOK, nil, nil)
	mainWith(t, env, "backup", "-source", "local:"+src).check(t, cli.ExitOK, nil, nil)
	// The second backup stores only big.bin's chunks in new data packs: the
	// largest pack holds nothing of a.txt.
	big := make([]byte, 6<<20)
	if _, err := rand.Read(big); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(src, "big.bin"), string(big))
	mainWith(t, env, "backup", "-source", "local:"+src).check(t, cli.ExitOK, nil, nil)
	damageLargestPack(t, repoDir)

	cases := []struct {
		name      string
		args      []string
		stdoutHas []string
	}{
		{"text", nil, []string{"Restored snapshot"}},
		{"json", []string{"-json"}, []string{`"damaged": [`, `"big.bin"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, "out-"+c.name)
			args := append([]string{"restore", "-output", out}, c.args...)
			res := mainWith(t, env, args...)
			stderrHas := []string{"damaged: big.bin", "cloudstic restore: 1 files could not be restored"}
			if c.name == "json" {
				stderrHas = stderrHas[:1]
			}
			res.check(t, cli.ExitPartial, c.stdoutHas, stderrHas)
			if data, err := os.ReadFile(filepath.Join(out, "a.txt")); err != nil || string(data) != "kept\n" {
				t.Errorf("a.txt: %q, %v; want it restored", data, err)
			}
			if _, err := os.Lstat(filepath.Join(out, "big.bin")); err == nil {
				t.Errorf("big.bin was written under its name though its data is damaged")
			}
		})
	}
}

// damageLargestPack flips bytes in the middle of the largest file under
// the repository's data/ directory.
func damageLargestPack(t *testing.T, repoDir string) {
	t.Helper()
	var path string
	var size int64
	err := filepath.WalkDir(filepath.Join(repoDir, "data"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil && info.Size() > size {
			path, size = p, info.Size()
		}
		return err
	})
	if err != nil || path == "" {
		t.Fatalf("no pack found: %v", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close() //nolint:errcheck // read-write handle; WriteAt's error is checked
	if _, err := f.WriteAt(make([]byte, 4096), size/2); err != nil {
		t.Fatal(err)
	}
}
