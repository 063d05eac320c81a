//go:build unix

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pruneOut is the part of prune's -json result these tests read.
type pruneOut struct {
	PacksDeleted   int   `json:"packs_deleted"`
	PacksRepacked  int   `json:"packs_repacked"`
	BytesReclaimed int64 `json:"bytes_reclaimed"`
	Kept           struct {
		UnindexedPacks int     `json:"unindexed_packs"`
		UnindexedBytes int64   `json:"unindexed_bytes"`
		MarginSeconds  float64 `json:"margin_seconds"`
	} `json:"kept"`
}

// checkedBytes runs check -read-data -json, fails unless it finds no
// error, and returns the bytes of packs it read: every pack the index
// names, i.e. the repository's data as the tool itself reads it on any
// store.
func checkedBytes(t *testing.T, r repoArgs) int64 {
	t.Helper()
	var out struct {
		OK     bool `json:"ok"`
		Result struct {
			Packs     int   `json:"packs"`
			PacksRead int   `json:"packs_read"`
			BytesRead int64 `json:"bytes_read"`
		} `json:"result"`
	}
	res := mustRun(t, r.with("check", "-read-data", "-json")...)
	decodeJSON(t, res, &out)
	if !out.OK || out.Result.PacksRead == 0 || out.Result.PacksRead != out.Result.Packs {
		t.Fatalf("check -read-data: %+v\n%v", out, res)
	}
	return out.Result.BytesRead
}

// TestForgetPruneShrinks: after a few backups of changing data,
// 'forget -keep-last 1 -prune' with the default margin shrinks the
// repository in one run (no hour's wait), check -read-data is clean after
// and the kept snapshot restores exactly.
func TestForgetPruneShrinks(t *testing.T) {
	t.Parallel()
	for _, kind := range storeKinds() {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t, kind)
			src := filepath.Join(t.TempDir(), "src")
			if err := os.MkdirAll(src, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(src, "common"), randomBytes(1, 300<<10), 0o644); err != nil {
				t.Fatal(err)
			}
			// Three backups, each with a new 1.5 MiB file in place of the last.
			for i := range 3 {
				if i > 0 {
					if err := os.Remove(filepath.Join(src, "own"+string(rune('0'+i-1)))); err != nil {
						t.Fatal(err)
					}
				}
				if err := os.WriteFile(filepath.Join(src, "own"+string(rune('0'+i))), randomBytes(uint64(10+i), 1536<<10), 0o644); err != nil {
					t.Fatal(err)
				}
				backupJSON(t, r, src)
			}
			before := checkedBytes(t, r)
			res := mustRun(t, r.with("forget", "-keep-last", "1", "-group-by", "", "-prune", "-json")...)
			var out struct {
				Removed []string  `json:"removed"`
				Prune   *pruneOut `json:"prune"`
			}
			decodeJSON(t, res, &out)
			if len(out.Removed) != 2 || out.Prune == nil {
				t.Fatalf("forget -prune: %+v\n%v", out, res)
			}
			p := out.Prune
			if p.PacksDeleted == 0 || p.Kept.UnindexedPacks != 0 || p.Kept.MarginSeconds != 95 {
				t.Fatalf("prune deleted %d packs and kept %+v, want deletions, nothing unindexed kept, the 1m35s margin\n%v", p.PacksDeleted, p.Kept, res)
			}
			after := checkedBytes(t, r)
			t.Logf("%s: %d -> %d bytes of packs (prune reports %d reclaimed)", kind.name, before, after, p.BytesReclaimed)
			// What stays is the 1.8 MiB of the last snapshot out of 4.8 MiB.
			if after > before/2 || before-after < p.BytesReclaimed*9/10 {
				t.Fatalf("packs went from %d to %d bytes (prune reports %d reclaimed): the repository did not shrink in one run", before, after, p.BytesReclaimed)
			}
			dst := filepath.Join(t.TempDir(), "out")
			mustRun(t, r.with("restore", "latest", "-output", dst)...)
			compareContent(t, "own2", filepath.Join(src, "own2"), filepath.Join(dst, "own2"))
			compareContent(t, "common", filepath.Join(src, "common"), filepath.Join(dst, "common"))
			// Nothing is left for a second prune; its text output names the margin.
			again := mustRun(t, r.with("prune")...)
			if !strings.Contains(again.stdout, "deleted 0 unused") {
				t.Fatalf("second prune still deletes:\n%v", again)
			}
		})
	}
}

// TestPruneReportsKeptLeftovers: a fresh pack no index names (a crashed
// backup's) is kept by the margin and the output says so, in text and
// JSON; with -margin 0 it goes.
func TestPruneReportsKeptLeftovers(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "repo")
	r := repoArgs{"-store", "local:" + dir, "-password", "correct horse"}
	mustRun(t, r.with("init")...)
	src := smallTree(t, 3)
	backupJSON(t, r, src)
	// A leftover: a copy of an indexed pack under another (unindexed) name.
	// Prune never reads unindexed packs, so a name that is not its hash is
	// fine here.
	var pack string
	err := filepath.WalkDir(filepath.Join(dir, "data"), func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && pack == "" {
			pack = p
		}
		return err
	})
	if err != nil || pack == "" {
		t.Fatalf("no pack found: %v", err)
	}
	data, err := os.ReadFile(pack)
	if err != nil {
		t.Fatal(err)
	}
	name := "ab" + strings.Repeat("0", 62)
	left := filepath.Join(dir, "data", "ab", name)
	if err := os.MkdirAll(filepath.Dir(left), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(left, data, 0o644); err != nil {
		t.Fatal(err)
	}
	text := mustRun(t, r.with("prune")...)
	if !strings.Contains(text.stdout, "Kept:        1 unindexed pack (") || !strings.Contains(text.stdout, "younger than the 1m35s margin") {
		t.Fatalf("prune does not say it kept the leftover:\n%v", text)
	}
	dry := mustRun(t, r.with("prune", "-dry-run")...)
	if !strings.Contains(dry.stdout, "Would keep:  1 unindexed pack (") {
		t.Fatalf("prune -dry-run does not say it would keep the leftover:\n%v", dry)
	}
	var out pruneOut
	decodeJSON(t, mustRun(t, r.with("prune", "-json")...), &out)
	if out.Kept.UnindexedPacks != 1 || out.Kept.UnindexedBytes != int64(len(data)) || out.PacksDeleted != 0 {
		t.Fatalf("prune -json: %+v, want 1 unindexed pack of %d bytes kept", out, len(data))
	}
	decodeJSON(t, mustRun(t, r.with("prune", "-json", "-margin", "0")...), &out)
	if out.Kept.UnindexedPacks != 0 || out.PacksDeleted != 1 {
		t.Fatalf("prune -margin 0 -json: %+v, want the leftover deleted", out)
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Fatalf("leftover still there: %v", err)
	}
	checkedBytes(t, r)
}
