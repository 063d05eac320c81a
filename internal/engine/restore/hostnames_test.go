package restore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/fsmeta"
	"github.com/cloudstic/cloudstic/internal/engine/restore"
)

// TestRestoreHostNames: names a snapshot may hold but Windows cannot are
// restored there under their documented mapping (docs/platforms.md), each
// with a warning; two names that are one name on Windows ("A" and "a",
// "a%3Ab" and the mapped "a:b") restore the first and report the second
// as not restored, never overwriting or merging. On Unix every name is
// restored as it is.
func TestRestoreHostNames(t *testing.T) {
	t.Parallel()
	st := checktest.NewRepo(t, t.TempDir())
	r := checktest.Open(t, st)
	content := `"content":["` + r.Key().ID([]byte("fine")).String() + `"]`
	// Sorted by name, as trees are: the clash's loser comes second.
	names := []string{"A", "CON", "a", "a%3Ab", "a:b", "aux.txt", "trail."}
	var nodes []string
	for _, n := range names {
		nodes = append(nodes, fmt.Sprintf(`{"name":%q,"type":"file","mode":420,"size":4,%s}`, n, content))
	}
	root := hostileSnapshot(t, st, `{"nodes":[`+strings.Join(nodes, ",")+`]}`)
	if _, err := r.LoadIndex(context.Background()); err != nil {
		t.Fatal(err)
	}

	wantFiles, wantDamaged, wantWarned := names, []string(nil), []string(nil)
	if runtime.GOOS == "windows" {
		wantFiles = []string{"%43ON", "%61ux.txt", "A", "a%3Ab", "trail%2E"}
		wantDamaged = []string{"d/a", "d/a:b"}
		wantWarned = []string{"d/CON", "d/aux.txt", "d/trail."}
	}
	out := filepath.Join(t.TempDir(), "out")
	var warnings []string
	warnf := func(f string, a ...any) { warnings = append(warnings, fmt.Sprintf(f, a...)) }
	res, err := restore.Run(context.Background(), r, checktest.Lease(t, st), root, restore.Options{Output: out, Warnf: warnf})
	if wantDamaged == nil && err != nil || wantDamaged != nil && !errors.Is(err, restore.ErrDamaged) {
		t.Fatalf("restore: %v", err)
	}
	if !slices.Equal(res.Damaged, wantDamaged) {
		t.Errorf("not restored: %q, want %q; warnings %q", res.Damaged, wantDamaged, warnings)
	}
	wantNames(t, filepath.Join(out, "d"), wantFiles)
	for _, rel := range wantWarned {
		if !slices.ContainsFunc(warnings, func(w string) bool { return strings.HasPrefix(w, rel+": restored as ") }) {
			t.Errorf("no warning that %s was restored under another name; warnings %q", rel, warnings)
		}
	}
	for _, rel := range wantDamaged {
		if !slices.ContainsFunc(warnings, func(w string) bool {
			return strings.HasPrefix(w, rel+": not restored: ") && strings.Contains(w, fsmeta.ErrNameClash.Error())
		}) {
			t.Errorf("no warning that %s clashes; warnings %q", rel, warnings)
		}
	}

	// -delete over that output removes only what the snapshot lacks: the
	// mapped names are the snapshot's entries, not extras.
	if err := os.WriteFile(filepath.Join(out, "d", "extra"), []byte("fine"), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := restore.Options{Output: out, Delete: true, Overwrite: restore.OverwriteIfChanged}
	res, err = restore.Run(context.Background(), r, checktest.Lease(t, st), root, opts)
	if wantDamaged == nil && err != nil || wantDamaged != nil && !errors.Is(err, restore.ErrDamaged) {
		t.Fatalf("restore -delete: %v", err)
	}
	if res.Deleted != 1 {
		t.Errorf("restore -delete deleted %d entries, want 1 (extra)", res.Deleted)
	}
	wantNames(t, filepath.Join(out, "d"), wantFiles)
}

// wantNames fails unless dir holds exactly the files want, each "fine".
func wantNames(t *testing.T, dir string, want []string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
		if data, err := os.ReadFile(filepath.Join(dir, e.Name())); err != nil || string(data) != "fine" {
			t.Errorf("%s holds %q (%v), want %q", e.Name(), data, err, "fine")
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("restored names %q, want %q", got, want)
	}
}
