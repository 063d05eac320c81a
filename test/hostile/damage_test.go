package hostile

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// plant writes data into the store directory st under prefix, named by its
// SHA-256 as sealed objects are, and returns the key.
func plant(t *testing.T, st, prefix string, data []byte) string {
	t.Helper()
	key := prefix + fmt.Sprintf("%x", sha256.Sum256(data))
	if err := os.WriteFile(filepath.Join(st, filepath.FromSlash(key)), data, 0o600); err != nil {
		t.Fatal(err)
	}
	return key
}

// junkBytes returns n random bytes.
func junkBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// wantWarnedOnce checks that a run succeeded and that its stderr has one
// line naming key and what to run, the rest being nothing but lines
// without it.
func wantWarnedOnce(t *testing.T, res result, key, hint string) {
	t.Helper()
	if res.code != 0 {
		t.Errorf("exit %d, want 0: %v", res.code, res)
		return
	}
	n := 0
	for _, line := range strings.Split(res.stderr, "\n") {
		if strings.Contains(line, key) {
			n++
			if !strings.HasPrefix(line, "warning: ") || !strings.Contains(line, hint) {
				t.Errorf("warning %q does not say %q", line, hint)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d lines name %s, want 1: %v", n, key, res)
	}
}

// snapshotIDs returns the ids list -json prints, oldest first.
func snapshotIDs(t *testing.T, flags []string) []string {
	t.Helper()
	res := run(t, append([]string{"list", "-json"}, flags...)...)
	var list struct {
		Snapshots []struct {
			ID string `json:"id"`
		}
	}
	if err := json.Unmarshal([]byte(res.stdout), &list); err != nil || res.code != 0 {
		t.Fatalf("list -json: %v\n%v", err, res)
	}
	var ids []string
	for _, s := range list.Snapshots {
		ids = append(ids, s.ID)
	}
	return ids
}

// sameTree fails unless every regular file under want is under got with
// the same content.
func sameTree(t *testing.T, got, want string) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(want, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(want, p)
		if err != nil {
			return err
		}
		w, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		g, err := os.ReadFile(filepath.Join(got, rel))
		if err != nil || !bytes.Equal(g, w) {
			t.Errorf("%s differs after restore: %v", rel, err)
		}
		n++
		return nil
	})
	if err != nil || n == 0 {
		t.Fatalf("compared %d files: %v", n, err)
	}
}

// TestJunkSnapshot plants a junk file named snapshots/<its SHA-256>: every
// command skips it with one warning naming it and exits 0, a retention
// policy neither counts nor deletes it, prune refuses, check names it,
// and repair snapshots removes it.
func TestJunkSnapshot(t *testing.T) {
	t.Parallel()
	st, flags, src := repoWithBackup(t)
	other := filepath.Join(t.TempDir(), "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "d.txt"), []byte("delta\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if res := run(t, append([]string{"backup", "-source", "local:" + other}, flags...)...); res.code != 0 {
		t.Fatalf("%v", res)
	}
	ids := snapshotIDs(t, flags)
	key := plant(t, st, "snapshots/", junkBytes(t, 400))
	out := t.TempDir()
	const hint = "'cloudstic repair snapshots' removes it"
	for _, args := range [][]string{
		{"list"},
		{"list", "-json"},
		{"ls", "latest"},
		{"find", "*.txt"},
		{"diff", ids[0], "latest"},
		{"stats"},
		{"dump", "latest", "/d.txt"},
		{"restore", "latest", "-output", filepath.Join(out, "latest")},
		{"backup", "-source", "local:" + src},
		{"tag", "-add", "t", "latest"},
		{"rewrite", "-exclude", "nothing-matches", "latest"},
		{"forget", "-keep-last", "1", "-dry-run"},
		{"forget", "-keep-last", "1", "-host", "nobody"},
		{"backup", "-source", "local:" + src, "-json"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			res := run(t, append(args, flags...)...)
			wantWarnedOnce(t, res, key, hint)
			if args[0] == "backup" && args[len(args)-1] == "-json" && !strings.Contains(res.stdout, `"damaged_snapshots"`) {
				t.Errorf("no damaged_snapshots in the document: %v", res)
			}
		})
	}
	// Retention: keep the newest of each group; the junk is in none.
	res := run(t, append([]string{"forget", "-keep-last", "1"}, flags...)...)
	wantWarnedOnce(t, res, key, hint)
	if _, err := os.Stat(filepath.Join(st, key)); err != nil {
		t.Fatalf("forget -keep-last deleted the damaged snapshot: %v", err)
	}
	wantOneLine(t, run(t, append([]string{"prune"}, flags...)...), 1, key, "cloudstic repair snapshots")
	res = run(t, append([]string{"check"}, flags...)...)
	if res.code != 1 || !strings.Contains(res.stderr, key) || !strings.Contains(res.stderr, "repair snapshots") {
		t.Errorf("check does not fail naming %s and the repair: %v", key, res)
	}
	res = run(t, append([]string{"repair", "snapshots"}, flags...)...)
	if res.code != 0 || !strings.Contains(res.stdout, "removed") || !strings.Contains(res.stdout, key) {
		t.Fatalf("repair snapshots: %v", res)
	}
	if _, err := os.Stat(filepath.Join(st, key)); !os.IsNotExist(err) {
		t.Errorf("the damaged snapshot is still there: %v", err)
	}
	for _, args := range [][]string{{"list"}, {"check", "-read-data"}, {"prune"}} {
		if res := run(t, append(args, flags...)...); res.code != 0 || strings.Contains(res.stderr, "warning: snapshots/") {
			t.Errorf("after the repair: %v", res)
		}
	}
}

// TestDamagedIndexFile flips a byte of the index file of a repository's
// second backup: commands that read go on, each with one warning naming
// the file and repair index; prune and forget -prune refuse; repair index
// rebuilds the index, after which both snapshots restore byte for byte
// and check -read-data passes.
func TestDamagedIndexFile(t *testing.T) {
	t.Parallel()
	st, flags, src := repoWithBackup(t)
	before, err := filepath.Glob(filepath.Join(st, "index", "packs", "*"))
	if err != nil || len(before) == 0 {
		t.Fatal("no index file", err)
	}
	src2 := filepath.Join(t.TempDir(), "src2")
	if err := os.MkdirAll(src2, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src2, "e.txt"), junkBytes(t, 50<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	if res := run(t, append([]string{"backup", "-source", "local:" + src2}, flags...)...); res.code != 0 {
		t.Fatalf("%v", res)
	}
	ids := snapshotIDs(t, flags)
	after, err := filepath.Glob(filepath.Join(st, "index", "packs", "*"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(after)
	var victim string
	for _, p := range after {
		if !slices.Contains(before, p) {
			victim = p
		}
	}
	if victim == "" || len(ids) != 2 {
		t.Fatalf("the second backup wrote no index file of its own (%v), or snapshots %v", after, ids)
	}
	data, err := os.ReadFile(victim)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 1
	if err := os.WriteFile(victim, data, 0o600); err != nil {
		t.Fatal(err)
	}
	key := "index/packs/" + filepath.Base(victim)
	const hint = "'cloudstic repair index' rebuilds the index"
	out := t.TempDir()
	for _, args := range [][]string{
		{"restore", ids[0], "-output", filepath.Join(out, "first")},
		{"ls", ids[0]},
		{"find", "-snapshot", ids[0], "*.txt"},
		{"dump", ids[0], "/a.txt"},
		{"backup", "-source", "local:" + src},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			wantWarnedOnce(t, run(t, append(args, flags...)...), key, hint)
		})
	}
	sameTree(t, filepath.Join(out, "first"), src)
	wantOneLine(t, run(t, append([]string{"prune"}, flags...)...), 1, key, "cloudstic repair index")
	res := run(t, append([]string{"forget", "-keep-last", "9", "-prune"}, flags...)...)
	if res.code != 1 || !strings.Contains(res.stderr, "cloudstic repair index") {
		t.Errorf("forget -prune: %v, want prune's refusal", res)
	}
	res = run(t, append([]string{"check"}, flags...)...)
	if res.code != 1 || !strings.Contains(res.stderr, key) || !strings.Contains(res.stderr, "repair index") {
		t.Errorf("check does not fail naming %s and the repair: %v", key, res)
	}
	if res := run(t, append([]string{"repair", "index"}, flags...)...); res.code != 0 {
		t.Fatalf("repair index: %v", res)
	}
	for i, want := range []string{src, src2} {
		dst := filepath.Join(out, fmt.Sprint("after", i))
		if res := run(t, append([]string{"restore", ids[i], "-output", dst}, flags...)...); res.code != 0 || strings.Contains(res.stderr, "warning: index/") {
			t.Fatalf("restore after the repair: %v", res)
		}
		sameTree(t, dst, want)
	}
	for _, args := range [][]string{{"check", "-read-data"}, {"prune"}} {
		if res := run(t, append(args, flags...)...); res.code != 0 {
			t.Errorf("after the repair: %v", res)
		}
	}
}
