//go:build unix

package e2e

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// rewriteOut is the -json document of rewrite.
type rewriteOut struct {
	DryRun  bool `json:"dry_run"`
	Changes []struct {
		OldID        string   `json:"old_id"`
		NewID        string   `json:"new_id"`
		OldDeleted   bool     `json:"old_deleted"`
		Removed      []string `json:"removed"`
		RemovedFiles int64    `json:"removed_files"`
		RemovedBytes int64    `json:"removed_bytes"`
	} `json:"changes"`
	Unchanged int `json:"unchanged"`
}

// leakedKey is the secret backed up by mistake: random enough to appear
// nowhere else.
const leakedKey = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ-e2e-rewrite-7f3a9c\n"

// TestRewriteRemovesSecret backs up a real tree with a leaked key file
// twice, removes the file from both snapshots with rewrite (a dry run
// first), prunes, and checks: the snapshots have new ids recording their
// originals, restore everything else byte for byte, find no longer sees
// the file, no blob in the store (decrypted through the repository layer,
// indexed or not) holds the secret's bytes any more, and check -read-data
// is clean.
func TestRewriteRemovesSecret(t *testing.T) {
	t.Parallel()
	r := newLocalRepo(t)
	src := smallTree(t, 31)
	secretPath := filepath.Join(src, "config", "id_ed25519")
	if err := os.MkdirAll(filepath.Dir(secretPath), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secretPath, []byte(leakedKey), 0o600); err != nil {
		t.Fatal(err)
	}
	first := backupJSON(t, r, src).SnapshotID
	writeRandom(t, filepath.Join(src, "later"), 50<<10, 31)
	second := backupJSON(t, r, src).SnapshotID
	repoDir := strings.TrimPrefix(r[1], "local:")
	if n := blobsWith(t, repoDir, []byte(leakedKey)); n != 1 {
		t.Fatalf("%d blobs hold the secret after the backups, want 1", n)
	}

	var dry rewriteOut
	decodeJSON(t, mustRun(t, r.with("rewrite", "-json", "-dry-run", "-exclude", "id_ed25519")...), &dry)
	if !dry.DryRun || len(dry.Changes) != 2 || !slices.Equal(dry.Changes[0].Removed, []string{"config/id_ed25519"}) ||
		dry.Changes[0].RemovedBytes != int64(len(leakedKey)) || dry.Changes[0].NewID != "" {
		t.Fatalf("dry run: %+v", dry)
	}
	out := mustRun(t, r.with("rewrite", "-exclude", "id_ed25519", "-dry-run")...).stdout
	if !strings.Contains(out, "  config/id_ed25519\n") || !strings.Contains(out, "2 snapshots would be rewritten") {
		t.Errorf("dry run output:\n%s", out)
	}

	var res rewriteOut
	decodeJSON(t, mustRun(t, r.with("rewrite", "-json", "-exclude", "id_ed25519")...), &res)
	if len(res.Changes) != 2 || res.Unchanged != 0 {
		t.Fatalf("rewrite: %+v", res)
	}
	for i, old := range []string{first, second} {
		c := res.Changes[i]
		if c.OldID != old || !c.OldDeleted || len(c.NewID) != 64 || catOriginal(t, r, c.NewID) != old {
			t.Errorf("change %d: %+v", i, c)
		}
	}
	ids := map[string]bool{}
	for _, s := range listJSON(t, r) {
		ids[s.ID] = true
	}
	if len(ids) != 2 || !ids[res.Changes[0].NewID] || !ids[res.Changes[1].NewID] {
		t.Fatalf("snapshots after the rewrite: %v", ids)
	}
	if out := mustRun(t, r.with("find", "id_ed25519")...).stdout; strings.Contains(out, "id_ed25519") {
		t.Errorf("find still sees the file:\n%s", out)
	}

	mustRun(t, r.with("prune", "-max-unused", "0")...)
	if n := blobsWith(t, repoDir, []byte(leakedKey)); n != 0 {
		t.Errorf("%d blobs still hold the secret after the prune", n)
	}
	mustRun(t, r.with("check", "-read-data")...)
	// The source as the rewritten snapshot has it: without the file, its
	// directory's times as they were when it was backed up.
	fi, err := os.Stat(filepath.Dir(secretPath))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(secretPath); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Dir(secretPath), fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "out")
	mustRun(t, r.with("restore", res.Changes[1].NewID, "-output", dst)...)
	compareTrees(t, src, dst, cmpOpts{})
}

// blobsWith opens the repository at dir through the repository layer,
// decrypts every blob of every pack in the store (indexed or not) and
// counts those whose plaintext contains needle.
func blobsWith(t *testing.T, dir string, needle []byte) int {
	t.Helper()
	ctx := context.Background()
	st := local.New(dir)
	rp, err := repo.Open(ctx, st, repo.Credentials{Password: "correct horse"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	err = st.List(ctx, repo.DataPrefix, func(oi store.ObjectInfo) error {
		pid, err := repo.IDFromKey(oi.Key)
		if err != nil {
			return err
		}
		entries, err := rp.ReadPackHeader(ctx, pid, oi.Size, 0)
		if err != nil {
			return err
		}
		data, err := st.Get(ctx, oi.Key, rp.MaxPackSize())
		if err != nil {
			return err
		}
		for _, e := range entries {
			plain, err := rp.DecodeBlobFromPack(data, e)
			if err != nil {
				return err
			}
			if bytes.Contains(plain, needle) {
				n++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRewriteErrors: no pattern, a bad pattern, a missing exclude file and
// an unknown snapshot fail with one line and change nothing.
func TestRewriteErrors(t *testing.T) {
	t.Parallel()
	r := newLocalRepo(t)
	sid := backupJSON(t, r, smallTree(t, 32)).SnapshotID
	for _, c := range []struct {
		args []string
		code int
		subs []string
	}{
		{nil, 2, []string{"-exclude"}},
		{[]string{"-exclude", "[a-"}, 2, []string{"[a-"}},
		{[]string{"-exclude-file", filepath.Join(t.TempDir(), "none")}, 2, []string{"-exclude-file"}},
		{[]string{"-exclude", "x", "ffffffff"}, 1, []string{"ffffffff"}},
	} {
		res := run(t, r.with("rewrite", c.args...)...)
		wantCode(t, res, c.code)
		wantOneLineError(t, res, c.subs...)
	}
	if l := listJSON(t, r); len(l) != 1 || l[0].ID != sid {
		t.Fatalf("snapshots after failed rewrites: %+v", l)
	}
}
