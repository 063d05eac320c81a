//go:build unix

package e2e

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDiskIndex runs a repository's life with its index kept on disk
// from its first index file (CLOUDSTIC_DISK_INDEX_MIN_MB=0; by default only
// repositories with 16 MiB of index files do): backups deduplicate
// against the file, restores and check read through it, and after prune
// deletes a file's data it still reads everything right.
func TestDiskIndex(t *testing.T) {
	t.Parallel()
	for _, kind := range []storeKind{{"local", localStore}, {"s3", s3Store}} {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			cacheDir := t.TempDir()
			o := runOpts{env: []string{"CLOUDSTIC_DISK_INDEX_MIN_MB=0", "CLOUDSTIC_CACHE_DIR=" + cacheDir}}
			r := newRepo(t, kind)
			do := func(args ...string) result {
				t.Helper()
				res := runWith(t, o, args...)
				if res.code != 0 {
					t.Fatalf("want exit 0, got %v", res)
				}
				return res
			}
			onDisk := func() []string {
				t.Helper()
				m, err := filepath.Glob(filepath.Join(cacheDir, "index", "*", "*.csdx"))
				if err != nil {
					t.Fatal(err)
				}
				return m
			}
			src := filepath.Join(t.TempDir(), "src")
			info := makeTree(t, src, treeOpts{seed: 7})
			do(r.with("backup", "-source", "local:"+src)...)
			if err := os.WriteFile(filepath.Join(src, "added.bin"), randomBytes(8, 3<<20), 0o644); err != nil {
				t.Fatal(err)
			}
			do(r.with("backup", "-source", "local:"+src)...)
			files := onDisk()
			if len(files) != 1 {
				t.Fatalf("on-disk index files %v, want one", files)
			}
			dst := filepath.Join(t.TempDir(), "out")
			do(r.with("restore", "latest", "-output", dst)...)
			compareTrees(t, src, dst, cmpOpts(info))
			do(r.with("check", "-read-data")...)

			// Gone from the last snapshot, its data goes with the others.
			if err := os.Remove(filepath.Join(src, "added.bin")); err != nil {
				t.Fatal(err)
			}
			do(r.with("backup", "-source", "local:"+src)...)
			do(r.with("forget", "-keep-last", "1", "-prune")...)
			do(r.with("backup", "-source", "local:"+src)...)
			// Whether the file is written anew depends on which index
			// files prune replaced (internal/repo tests that a stale
			// file is never used); one file, never litter.
			if now := onDisk(); len(now) != 1 {
				t.Fatalf("on-disk index files after prune %v, want one", now)
			}
			dst2 := filepath.Join(t.TempDir(), "out")
			do(r.with("restore", "latest", "-output", dst2)...)
			compareTrees(t, src, dst2, cmpOpts(info))
			do(r.with("check", "-read-data")...)
		})
	}
}
