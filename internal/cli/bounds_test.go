package cli_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/cli"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/treewalk/walktest"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// TestCraftedTrees runs the commands on crafted snapshots written with the
// key: one 100,000 levels deep fails every command that reads its trees
// with the depth error; one whose trees are shared 2^40 ways fails those
// that expand every path with the budget error, and is counted by stats;
// each error is one line naming the snapshot. Two identical directories
// (one tree) are listed, counted and restored path by path.
func TestCraftedTrees(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store := filepath.Join(dir, "repo")
	// A platform key: no key derivation per command (seconds under -race).
	const key = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
	env := map[string]string{"CLOUDSTIC_STORE": "local:" + store, "CLOUDSTIC_ENCRYPTION_KEY": key, "HOME": dir}
	mainWith(t, env, "init").check(t, cli.ExitOK, nil, nil)
	r, err := repo.Open(context.Background(), local.New(store), repo.Credentials{PlatformKey: key})
	if err != nil {
		t.Fatal(err)
	}
	var h walktest.Hostile
	checktest.Write(t, local.New(store), r, func(w *repo.Writer) { h = walktest.WriteHostile(t, w) })
	deep, shared, twins := h.Deep.ID.Short(), h.Shared.ID.Short(), h.Twins.ID.Short()
	tooDeep := "snapshot " + deep + ": " // then the path, then the error
	tooMany := "snapshot " + shared + ": " + tree.ErrTooManyEntries.Error()
	out := func(name string) string { return filepath.Join(t.TempDir(), name) }

	tests := []struct {
		name      string
		args      []string
		code      int
		stdoutHas []string
		stderrHas []string
	}{
		{"ls deep", []string{"ls", deep}, cli.ExitError, nil, []string{tooDeep, tree.ErrTooDeep.Error()}},
		{"ls shared", []string{"ls", shared}, cli.ExitError, nil, []string{tooMany}},
		{"ls -json shared", []string{"ls", "-json", shared}, cli.ExitError, nil, []string{tooMany}},
		{"ls twins", []string{"ls", twins}, cli.ExitOK, []string{"a/d/g", "b/d/g", "b/f"}, nil},
		{"find deep", []string{"find", "-snapshot", deep, "f"}, cli.ExitError, nil, []string{tooDeep, tree.ErrTooDeep.Error()}},
		{"find shared", []string{"find", "-snapshot", shared, "f"}, cli.ExitError, nil, []string{tooMany}},
		{"dump deep", []string{"dump", deep, "/", "-archive", "tar"}, cli.ExitError, nil, []string{tooDeep, tree.ErrTooDeep.Error()}},
		{"dump shared", []string{"dump", shared, "/", "-archive", "zip"}, cli.ExitError, nil, []string{tooMany}},
		{"restore deep", []string{"restore", deep, "-output", out("o")}, cli.ExitError, nil, []string{tooDeep, tree.ErrTooDeep.Error()}},
		{"restore deep zip", []string{"restore", deep, "-output", out("o.zip")}, cli.ExitError, nil, []string{tooDeep, tree.ErrTooDeep.Error()}},
		{"restore shared", []string{"restore", shared, "-output", out("o")}, cli.ExitError, nil, []string{tooMany}},
		{"restore twins", []string{"restore", twins, "-output", out("o")}, cli.ExitOK, nil, nil},
		{"diff deep", []string{"diff", twins, deep}, cli.ExitError, nil, []string{tree.ErrTooDeep.Error()}},
		{"diff shared", []string{"diff", twins, shared}, cli.ExitError, nil, []string{"snapshots " + twins + " and " + shared + ": " + tree.ErrTooManyEntries.Error()}},
		{"stats deep", []string{"stats", deep}, cli.ExitError, nil, []string{tooDeep, tree.ErrTooDeep.Error()}},
		{"stats shared", []string{"stats", shared}, cli.ExitOK, []string{"Files:", "1099511627776"}, nil},
		{"stats shared raw-data", []string{"stats", shared, "-mode", "raw-data"}, cli.ExitOK, []string{"Blobs:", "41 tree"}, nil},
		{"stats shared files-by-contents", []string{"stats", shared, "-mode", "files-by-contents"}, cli.ExitOK, []string{"Distinct files:"}, nil},
		{"stats shared blobs-per-file", []string{"stats", shared, "-mode", "blobs-per-file"}, cli.ExitOK, []string{"Blobs per file:"}, nil},
		{"stats twins", []string{"stats", twins}, cli.ExitOK, []string{"4 files, 4 dirs"}, nil},
		{"stats -growth", []string{"stats", "-growth", shared, twins}, cli.ExitOK, []string{shared, twins}, nil},
		{"check", []string{"check"}, cli.ExitError, nil, []string{deep, shared}}, // check reports on stderr, as Cloudstic's does
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := mainWith(t, env, tt.args...)
			o.check(t, tt.code, tt.stdoutHas, tt.stderrHas)
			if tt.code == cli.ExitError && tt.name != "check" {
				if lines := strings.Count(strings.TrimRight(o.stderr, "\n"), "\n") + 1; lines != 1 {
					t.Errorf("stderr has %d lines, want one:\n%s", lines, o.stderr)
				}
			}
		})
	}
}
