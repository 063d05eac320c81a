package restore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/restore"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
	"github.com/cloudstic/cloudstic/internal/store"
)

// hostileSnapshot stores a snapshot whose root tree is the given raw JSON
// blob below a directory "d" (so that restoring starts normally), and
// returns the root tree id.
func hostileSnapshot(t *testing.T, st store.Store, rawTree string) id.ID {
	t.Helper()
	ctx := context.Background()
	r := checktest.Open(t, st)
	if _, err := r.LoadIndex(ctx); err != nil {
		t.Fatal(err)
	}
	w := checktest.Writer(t, st, r)
	s := w.NewSaver(ctx, 1, pack.Zstd)
	save := func(data []byte) id.ID {
		tid := r.Key().ID(data)
		if _, err := s.Save(ctx, pack.TreeBlob, tid, data); err != nil {
			t.Fatal(err)
		}
		return tid
	}
	sub := save([]byte(rawTree))
	okData := []byte("fine")
	okID := r.Key().ID(okData)
	if _, err := s.Save(ctx, pack.DataBlob, okID, okData); err != nil {
		t.Fatal(err)
	}
	root, err := tree.Encode(&tree.Tree{Nodes: []tree.Node{
		{Name: "d", Type: tree.TypeDir, Mode: 0o755, Subtree: sub},
		{Name: "ok.txt", Type: tree.TypeFile, Mode: 0o644, Size: 4, Content: []id.ID{okID}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	rootID := save(root)
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := w.SaveSnapshot(ctx, &snapshot.Snapshot{Tree: rootID, Source: "local:/x", Hostname: "h", Nonce: []byte{1}}); err != nil {
		t.Fatal(err)
	}
	return rootID
}

// TestRestoreHostileNames restores trees whose entries try to escape the
// output directory: the tree is rejected as corrupt (its directory is
// reported damaged, with tree.ErrCorrupt as the reason), and nothing is
// written outside the output directory.
func TestRestoreHostileNames(t *testing.T) {
	t.Parallel()
	blob := `"content":["` + id.ID{1}.String() + `"]`
	tests := []struct{ name, tree string }{
		{"dotdot", `{"nodes":[{"name":"..","type":"file","size":1,` + blob + `}]}`},
		{"dot", `{"nodes":[{"name":".","type":"file","size":1,` + blob + `}]}`},
		{"absolute", `{"nodes":[{"name":"/abs","type":"file","size":1,` + blob + `}]}`},
		{"embedded dotdot", `{"nodes":[{"name":"a/../../b","type":"file","size":1,` + blob + `}]}`},
		{"slash", `{"nodes":[{"name":"a/b","type":"file","size":1,` + blob + `}]}`},
		{"NUL", `{"nodes":[{"name":"a\u0000b","type":"file","size":1,` + blob + `}]}`},
		{"empty", `{"nodes":[{"name":"","type":"file","size":1,` + blob + `}]}`},
		{"raw dotdot slash", `{"nodes":[{"name":"","name_raw":"Li4vZXNjYXBl","type":"file","size":1,` + blob + `}]}`},
		{"dotdot directory", `{"nodes":[{"name":"..","type":"dir","subtree":"` + id.ID{2}.String() + `"}]}`},
		{"duplicate", `{"nodes":[{"name":"x","type":"symlink","target":"/etc"},{"name":"x","type":"dir","subtree":"` + id.ID{2}.String() + `"}]}`},
		{"unknown type", `{"nodes":[{"name":"x","type":"hardlink","target":"/etc/passwd"}]}`},
		{"not JSON", `{"nodes":[`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st := checktest.NewRepo(t, t.TempDir())
			root := hostileSnapshot(t, st, tc.tree)
			r := checktest.Open(t, st)
			if _, err := r.LoadIndex(context.Background()); err != nil {
				t.Fatal(err)
			}
			parent := t.TempDir()
			out := filepath.Join(parent, "deep", "out")
			for _, format := range []string{restore.FormatDir, restore.FormatZip} {
				output := out
				if format == restore.FormatZip {
					output = filepath.Join(parent, "out.zip")
				}
				var warnings []string
				warnf := func(f string, a ...any) { warnings = append(warnings, fmt.Sprintf(f, a...)) }
				res, err := restore.Run(context.Background(), r, checktest.Lease(t, st), root, restore.Options{Output: output, Format: format, Warnf: warnf})
				if !errors.Is(err, restore.ErrDamaged) || res == nil || strings.Join(res.Damaged, ",") != "d" {
					t.Fatalf("%s restore: %v, result %+v; want ErrDamaged naming d", format, err, res)
				}
				if len(warnings) != 1 || !strings.HasPrefix(warnings[0], "d: not restored: ") || !strings.Contains(warnings[0], tree.ErrCorrupt.Error()) {
					t.Errorf("%s restore warnings %q, want one saying d's tree is corrupt", format, warnings)
				}
			}
			wantOnly(t, parent, "deep", "deep/out", "deep/out/d", "deep/out/ok.txt", "out.zip")
		})
	}
}

// wantOnly fails unless the entries below dir are a subset of allowed.
func wantOnly(t *testing.T, dir string, allowed ...string) {
	t.Helper()
	ok := map[string]bool{}
	for _, a := range allowed {
		ok[a] = true
	}
	err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		if !ok[filepath.ToSlash(rel)] {
			t.Errorf("unexpected entry %s written", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRestoreSymlinkInTarget restores into an output directory where a
// directory and a file of the snapshot are symlinks pointing outside: the
// outside stays untouched, the rest is restored.
func TestRestoreSymlinkInTarget(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	outside := t.TempDir()
	victim := filepath.Join(outside, "victim")
	if err := os.WriteFile(victim, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(out, "dir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(out, "a.txt")); err != nil {
		t.Fatal(err)
	}
	r, root := f.open(t)
	res, err := restore.Run(context.Background(), r, checktest.Lease(t, f.st), root, restore.Options{Output: out, Format: restore.FormatDir})
	t.Logf("restore: %v (result %+v)", err, res)
	wantOnly(t, outside, "victim")
	if data, err := os.ReadFile(victim); err != nil || string(data) != "keep me" {
		t.Errorf("file outside the target changed: %q %v", data, err)
	}
	for _, rel := range []string{"big.bin", "z.txt"} {
		want, _ := os.ReadFile(filepath.Join(f.src, rel)) // compared below
		if got, err := os.ReadFile(filepath.Join(out, rel)); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s not restored next to the symlinks: %v", rel, err)
		}
	}
	if err == nil {
		t.Error("restore into a target with conflicting symlinks reported success")
	}
}
