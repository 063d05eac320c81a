package restore_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/fsmeta"
	"github.com/cloudstic/cloudstic/internal/engine/restore"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
	"github.com/cloudstic/cloudstic/internal/store"
)

// The names of foldSnapshot's directory d, in a tree's (byte) order.
const (
	resumeNFD = "re\u0301sume\u0301.txt" // decomposed, as HFS+ stores it
	resumeNFC = "r\u00e9sum\u00e9.txt"   // precomposed, as most systems write it
)

// foldSnapshot stores a snapshot whose directory d holds names that are
// one name where case or Unicode normalization is folded, each file with
// its own content: Docs/a.txt, Report.txt, docs/b.txt, report.txt and
// "résumé.txt" decomposed and precomposed. It returns the root tree id.
func foldSnapshot(t *testing.T, st store.Store) id.ID {
	t.Helper()
	ctx := context.Background()
	r := checktest.Open(t, st)
	if _, err := r.LoadIndex(ctx); err != nil {
		t.Fatal(err)
	}
	w := checktest.Writer(t, st, r)
	s := w.NewSaver(ctx, 1, pack.Zstd)
	save := func(typ pack.BlobType, data []byte) id.ID {
		bid := r.Key().ID(data)
		if _, err := s.Save(ctx, typ, bid, data); err != nil {
			t.Fatal(err)
		}
		return bid
	}
	file := func(name, content string) tree.Node {
		return tree.Node{Name: name, Type: tree.TypeFile, Mode: 0o644, Size: uint64(len(content)),
			Content: []id.ID{save(pack.DataBlob, []byte(content))}}
	}
	dir := func(name string, nodes ...tree.Node) tree.Node {
		data, err := tree.Encode(&tree.Tree{Nodes: nodes})
		if err != nil {
			t.Fatal(err)
		}
		return tree.Node{Name: name, Type: tree.TypeDir, Mode: 0o755, Subtree: save(pack.TreeBlob, data)}
	}
	root := dir("", dir("d",
		dir("Docs", file("a.txt", "first dir")),
		file("Report.txt", "first"),
		dir("docs", file("b.txt", "second dir")),
		file("report.txt", "second"),
		file(resumeNFD, "decomposed"),
		file(resumeNFC, "precomposed"),
	))
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := w.SaveSnapshot(ctx, &snapshot.Snapshot{Tree: root.Subtree, Source: "local:/x", Hostname: "h", Nonce: []byte{1}}); err != nil {
		t.Fatal(err)
	}
	return root.Subtree
}

// TestRestoreFoldingTarget: on a target whose file system takes names
// that differ only in case (or only in Unicode normalization) for one, the
// first of such names in the snapshot is restored and the second, with all
// below it, is reported as not restored (ErrDamaged, Result.Damaged, a
// warning naming fsmeta.ErrNameClash), never overwriting or merging into
// the first, with or without -overwrite, on a dry run too. The target's
// folding is given to the restore (restore.SetFolding); on Windows, and
// under Wine, fsmeta.FoldName folds case on every target, for real, and
// normalization is not folded.
func TestRestoreFoldingTarget(t *testing.T) {
	t.Parallel()
	st := checktest.NewRepo(t, t.TempDir())
	root := foldSnapshot(t, st)
	r := checktest.Open(t, st)
	if _, err := r.LoadIndex(context.Background()); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name               string
		caseless, normless bool
		overwrite          restore.Overwrite
		dryRun, again      bool
	}{
		{name: "names as they are"},
		{name: "caseless", caseless: true},
		{name: "caseless overwrite", caseless: true, overwrite: restore.OverwriteAlways, again: true},
		{name: "caseless if-changed", caseless: true, overwrite: restore.OverwriteIfChanged, again: true},
		{name: "caseless dry run", caseless: true, dryRun: true},
		{name: "normless", normless: true},
		{name: "caseless and normless", caseless: true, normless: true, overwrite: restore.OverwriteAlways, again: true},
		{name: "caseless and normless dry run", caseless: true, normless: true, dryRun: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			caseless := tc.caseless || runtime.GOOS == "windows"
			normless := tc.normless && runtime.GOOS != "windows"
			want := map[string]string{
				"d/Docs/a.txt": "first dir", "d/Report.txt": "first", "d/docs/b.txt": "second dir",
				"d/report.txt": "second", "d/" + resumeNFD: "decomposed", "d/" + resumeNFC: "precomposed",
			}
			var wantDamaged []string
			if caseless {
				wantDamaged = append(wantDamaged, "d/docs", "d/report.txt")
				delete(want, "d/docs/b.txt")
				delete(want, "d/report.txt")
			}
			if normless {
				wantDamaged = append(wantDamaged, "d/"+resumeNFC)
				delete(want, "d/"+resumeNFC)
			}
			out := filepath.Join(t.TempDir(), "out")
			opts := restore.Options{Output: out, Overwrite: tc.overwrite, DryRun: tc.dryRun}
			restore.SetFolding(&opts, tc.caseless, tc.normless)
			runs := 1
			if tc.again {
				runs = 2 // over the first run's output: nothing there is overwritten by a clashing name
			}
			for range runs {
				var warnings []string
				opts.Warnf = func(f string, a ...any) { warnings = append(warnings, fmt.Sprintf(f, a...)) }
				res, err := restore.Run(context.Background(), r, checktest.Lease(t, st), root, opts)
				if wantDamaged == nil && err != nil || wantDamaged != nil && !errors.Is(err, restore.ErrDamaged) {
					t.Fatalf("restore: %v; warnings %q", err, warnings)
				}
				if !slices.Equal(res.Damaged, wantDamaged) {
					t.Errorf("not restored: %q, want %q; warnings %q", res.Damaged, wantDamaged, warnings)
				}
				for _, rel := range wantDamaged {
					if !slices.ContainsFunc(warnings, func(w string) bool {
						return (strings.HasPrefix(w, rel+": not restored: ") || strings.HasPrefix(w, rel+": would not be restored: ")) &&
							strings.Contains(w, fsmeta.ErrNameClash.Error())
					}) {
						t.Errorf("no warning that %s clashes; warnings %q", rel, warnings)
					}
				}
				if tc.dryRun {
					if _, err := os.Lstat(out); !errors.Is(err, fs.ErrNotExist) {
						t.Errorf("a dry run made the output: %v", err)
					}
					continue
				}
				wantTree(t, out, want)
			}
		})
	}
}

// wantTree fails unless the files below dir are exactly want's keys
// (slash-separated paths), each holding its value.
func wantTree(t *testing.T, dir string, want map[string]string) {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		got[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for rel, content := range want {
		if got[rel] != content {
			t.Errorf("%s holds %q, want %q", rel, got[rel], content)
		}
	}
	for rel := range got {
		if _, ok := want[rel]; !ok {
			t.Errorf("unexpected file %s in the output", rel)
		}
	}
}

// TestProbeFolding looks, as a restore does, at how the file system of a
// temporary directory compares names: Linux's tmpfs and ext4 (without
// casefold) take every name as it is; Wine's and Windows's file systems
// fold case. The probe leaves nothing behind.
func TestProbeFolding(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		sub  string // the directory probed, below a temporary one
	}{
		{name: "temporary directory"},
		{name: "subdirectory", sub: "Sub"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), tc.sub)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			caseless, normless, err := restore.ProbeFolding(dir)
			if err != nil {
				t.Fatal(err)
			}
			if want := runtime.GOOS == "windows"; caseless != want {
				t.Errorf("caseless %v, want %v", caseless, want)
			}
			if runtime.GOOS == "linux" && normless {
				t.Errorf("normless on Linux outside a casefold directory")
			}
			if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
				t.Errorf("probe left %v (%v)", entries, err)
			}
		})
	}
	if _, _, err := restore.ProbeFolding(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("probe of a missing directory: %v, want fs.ErrNotExist", err)
	}
}

// TestRestoreFoldingDelete: -delete on a target that folds case takes an
// entry on disk whose name differs from the snapshot's only in case
// ("REPORT.txt" for "Report.txt") for the snapshot's, which it is there,
// not for an extra to delete; a real extra goes. A dry run lists the same.
func TestRestoreFoldingDelete(t *testing.T) {
	t.Parallel()
	st := checktest.NewRepo(t, t.TempDir())
	root := foldSnapshot(t, st)
	r := checktest.Open(t, st)
	if _, err := r.LoadIndex(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, dryRun := range []bool{false, true} {
		t.Run(fmt.Sprintf("dry run %v", dryRun), func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "out")
			if err := os.MkdirAll(filepath.Join(out, "d"), 0o755); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"REPORT.txt", "extra"} {
				if err := os.WriteFile(filepath.Join(out, "d", name), []byte("old"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			opts := restore.Options{Output: out, Delete: true, Overwrite: restore.OverwriteAlways, DryRun: dryRun}
			restore.SetFolding(&opts, true, false)
			res, err := restore.Run(context.Background(), r, checktest.Lease(t, st), root, opts)
			if !errors.Is(err, restore.ErrDamaged) || !slices.Equal(res.Damaged, []string{"d/docs", "d/report.txt"}) {
				t.Fatalf("restore: %v, not restored %q; want ErrDamaged naming d/docs and d/report.txt", err, res.Damaged)
			}
			if dryRun {
				if !slices.Equal(res.DeletePaths, []string{"d/extra"}) {
					t.Errorf("would delete %q, want only d/extra", res.DeletePaths)
				}
				return
			}
			if res.Deleted != 1 {
				t.Errorf("deleted %d entries, want 1 (extra)", res.Deleted)
			}
			if _, err := os.Lstat(filepath.Join(out, "d", "extra")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("extra not deleted: %v", err)
			}
			if _, err := os.Lstat(filepath.Join(out, "d", "REPORT.txt")); err != nil {
				t.Errorf("REPORT.txt, the snapshot's Report.txt on this target, deleted: %v", err)
			}
			if data, err := os.ReadFile(filepath.Join(out, "d", "Report.txt")); err != nil || string(data) != "first" {
				t.Errorf("d/Report.txt holds %q (%v), want %q", data, err, "first")
			}
		})
	}
}
