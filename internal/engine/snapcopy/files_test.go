package snapcopy_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/snapcopy"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/crypt"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// TestCopyManyFiles copies a directory of 40 files, copied several at once,
// pairs of them with the same content: the copy restores byte for byte,
// checks clean and indexes no blob twice. With one file's data damaged in
// the source, the copy fails naming that file and stores no snapshot.
func TestCopyManyFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	storeDir, dir := t.TempDir(), t.TempDir()
	src := checktest.NewRepo(t, storeDir)
	for i := range 40 {
		checktest.WriteFile(t, dir, fmt.Sprintf("f%02d", i), uint64(i%20+1), 20<<10)
	}
	sid := checktest.Backup(t, src, dir)
	params := repo.ChunkerParams{Min: 4 << 10, Avg: 16 << 10, Max: 64 << 10}

	dst := newDest(t, params)
	res, err := runCopy(ctx, t, src, dst, snapcopy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Copied) != 1 || res.Rechunked {
		t.Fatalf("copy: %+v", res)
	}
	restoreEqual(t, dst, destSnapshots(t, dst)[sid], dir)
	noDuplicateBlobs(t, dst)
	checkClean(t, dst)

	// Damage the data of f07 (and of f27, the same content).
	r := checktest.Open(t, src)
	if _, err := r.LoadIndex(ctx); err != nil {
		t.Fatal(err)
	}
	node := lookupFile(t, r, sid, "f07")
	loc, ok := r.Index().Lookup(t.Context(), node.Content[0])
	if !ok {
		t.Fatal("f07's first blob is not indexed")
	}
	packFile := filepath.Join(storeDir, filepath.FromSlash(repo.PackKey(loc.Pack)))
	data, err := os.ReadFile(packFile)
	if err != nil {
		t.Fatal(err)
	}
	data[loc.Offset+loc.Length/2] ^= 0xff
	if err := os.WriteFile(packFile, data, 0o600); err != nil {
		t.Fatal(err)
	}
	dst = newDest(t, params)
	_, err = runCopy(ctx, t, src, dst, snapcopy.Options{})
	if !errors.Is(err, crypt.ErrAuth) {
		t.Fatalf("copy of damaged data: %v, want %v", err, crypt.ErrAuth)
	}
	if msg := err.Error(); !strings.Contains(msg, "f07") && !strings.Contains(msg, "f27") {
		t.Errorf("error %q names neither file of the damaged content", msg)
	}
	if got := destSnapshots(t, dst); len(got) != 0 {
		t.Fatalf("a failed copy stored snapshots: %v", got)
	}
}

// lookupFile returns the node of name in the root directory of snapshot sid.
func lookupFile(t *testing.T, r *repo.Repository, sid id.ID, name string) tree.Node {
	t.Helper()
	ctx := context.Background()
	s, err := r.LoadSnapshot(ctx, sid)
	if err != nil {
		t.Fatal(err)
	}
	root, err := r.LoadTree(ctx, s.Tree)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range root.Nodes {
		if n.Name == name {
			return n
		}
	}
	t.Fatalf("%s not in the snapshot's root", name)
	return tree.Node{}
}
