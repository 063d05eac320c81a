//go:build unix

package crash

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// manifest maps each entry below a root to "dir" or its content's SHA-256.
type manifest map[string]string

// scan makes the manifest of root.
func scan(t *testing.T, root string) manifest {
	t.Helper()
	m := manifest{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			m[rel] = "dir"
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		m[rel] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// diff describes how got differs from want ("" when equal).
func (want manifest) diff(got manifest) string {
	var out []string
	for k, v := range want {
		if g, ok := got[k]; !ok {
			out = append(out, "missing "+k)
		} else if g != v {
			out = append(out, "different "+k)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			out = append(out, "extra "+k)
		}
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// writeFile writes n random bytes.
func writeFile(t *testing.T, p string, rng *rand.Rand, n int) {
	t.Helper()
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// fileSize is mostly small, sometimes up to 700 KiB (one chunk or two).
func fileSize(rng *rand.Rand) int {
	if rng.IntN(6) == 0 {
		return 100<<10 + rng.IntN(600<<10)
	}
	return 1 + rng.IntN(40<<10)
}

// makeTree writes a tree of n files in a few directories (about 1-3 MB).
func makeTree(t *testing.T, root string, rng *rand.Rand, n int) {
	t.Helper()
	for i := range n {
		writeFile(t, filepath.Join(root, fmt.Sprintf("d%d", i%4), fmt.Sprintf("f%03d", i)), rng, fileSize(rng))
	}
}

// mutate changes a few files, adds some and removes one.
func mutate(t *testing.T, root string, rng *rand.Rand) {
	t.Helper()
	var files []string
	for rel, v := range scan(t, root) {
		if v != "dir" {
			files = append(files, rel)
		}
	}
	slices.Sort(files)
	for range 3 {
		writeFile(t, filepath.Join(root, files[rng.IntN(len(files))]), rng, fileSize(rng))
	}
	for range 2 {
		writeFile(t, filepath.Join(root, fmt.Sprintf("d%d", rng.IntN(5)), fmt.Sprintf("n%08x", rng.Uint32())), rng, fileSize(rng))
	}
	if err := os.Remove(filepath.Join(root, files[rng.IntN(len(files))])); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
}

// repoState is a test repository and what each of its snapshots must
// restore to.
type repoState struct {
	store string
	snaps map[string]manifest // snapshot id -> content
	tmp   string              // scratch space for restores
}

// newRepo initialises a repository.
func newRepo(t *testing.T) *repoState {
	t.Helper()
	r := &repoState{store: filepath.Join(t.TempDir(), "repo"), snaps: map[string]manifest{}, tmp: t.TempDir()}
	mustRun(t, r.store, "init", "-encryption-key", key)
	return r
}

// snap is one element of list -json.
type snap struct {
	ID      string `json:"id"`
	Path    string `json:"path"`
	Created string `json:"created"`
}

// list returns the snapshots, oldest first.
func (r *repoState) list(t *testing.T) []snap {
	t.Helper()
	res := mustRun(t, r.store, "list", "-json")
	var out struct{ Snapshots []snap }
	if err := json.Unmarshal([]byte(res.stdout), &out); err != nil {
		t.Fatalf("list -json: %v\n%v", err, res)
	}
	return out.Snapshots
}

// ids returns the snapshot ids of list.
func ids(snaps []snap) []string {
	var out []string
	for _, s := range snaps {
		out = append(out, s.ID)
	}
	return out
}

// backup backs up src cleanly and records the snapshot.
func (r *repoState) backup(t *testing.T, src string) string {
	t.Helper()
	res := mustRun(t, r.store, "backup", "-json", "-source", "local:"+src)
	var out struct {
		SnapshotID string `json:"snapshot_id"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &out); err != nil || len(out.SnapshotID) != 64 {
		t.Fatalf("backup -json: %v\n%v", err, res)
	}
	r.snaps[out.SnapshotID] = scan(t, src)
	return out.SnapshotID
}

// adopt records snapshots that a killed or failed backup saved: the source
// (sources maps its path to its content) did not change while it ran.
func (r *repoState) adopt(t *testing.T, sources map[string]manifest) {
	t.Helper()
	for _, s := range r.list(t) {
		if _, ok := r.snaps[s.ID]; ok {
			continue
		}
		m, ok := sources[s.Path]
		if !ok {
			t.Fatalf("snapshot %s of %s appeared from nowhere", s.ID, s.Path)
		}
		t.Logf("recorded snapshot %s of %s", s.ID[:8], s.Path)
		r.snaps[s.ID] = m
	}
}

// breakLocks removes the locks a killed process left (its holder is known
// dead; the CLI's lease is fixed at one minute).
func (r *repoState) breakLocks(t *testing.T) {
	t.Helper()
	mustRun(t, r.store, "break-lock")
}

// verify checks the repository with check -read-data, requires every
// snapshot in want to be listed still, and restores every listed snapshot
// byte for byte (call adopt first if an interrupted backup may have saved
// one).
func (r *repoState) verify(t *testing.T, want []string) {
	t.Helper()
	mustRun(t, r.store, "check", "-read-data", "-quiet")
	listed := ids(r.list(t))
	for _, id := range want {
		if !slices.Contains(listed, id) {
			t.Fatalf("snapshot %s is gone", id)
		}
	}
	for id := range r.snaps {
		if !slices.Contains(listed, id) {
			delete(r.snaps, id)
		}
	}
	for _, id := range listed {
		r.restoreEqual(t, id)
	}
}

// restoreEqual restores snapshot id and compares it with its source.
func (r *repoState) restoreEqual(t *testing.T, id string) {
	t.Helper()
	want, ok := r.snaps[id]
	if !ok {
		t.Fatalf("snapshot %s: content unknown", id)
	}
	dst, err := os.MkdirTemp(r.tmp, "restore-")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := os.RemoveAll(dst); err != nil {
			t.Error(err)
		}
	}()
	mustRun(t, r.store, "restore", id, "-output", dst, "-quiet")
	if d := want.diff(scan(t, dst)); d != "" {
		t.Fatalf("snapshot %s does not restore byte for byte: %s", id[:8], d)
	}
}

// copyRepo copies the repository for a trial run.
func (r *repoState) copyRepo(t *testing.T) string {
	t.Helper()
	dst, err := os.MkdirTemp(r.tmp, "copy-")
	if err != nil {
		t.Fatal(err)
	}
	dst = filepath.Join(dst, "repo")
	if err := os.CopyFS(dst, os.DirFS(r.store)); err != nil {
		t.Fatal(err)
	}
	return dst
}
