package backup_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/repotest"
)

// TestBackupDamagedDiskIndex: a backup whose on-disk index (the local
// file derived from the index files) is damaged past what opening it
// checks stores nothing again (the file is rebuilt), and the next run
// uses the rebuilt file. The old reader took the damaged block's blobs
// for missing, and the backup stored them again. With no parent, every
// chunk is looked up.
func TestBackupDamagedDiskIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := t.TempDir()
	st := checktest.NewRepo(t, t.TempDir())
	const files, size = 6, 100_000
	for i := range files {
		checktest.WriteFile(t, src, fmt.Sprintf("f%d", i), uint64(i), size)
	}
	checktest.Backup(t, st, src)
	for _, dryRun := range []bool{false, true} {
		t.Run(fmt.Sprintf("dry run %v", dryRun), func(t *testing.T) {
			r, path := repotest.OpenDamaged(t, func() *repo.Repository { return checktest.Open(t, st) })
			if _, err := r.LoadIndex(ctx); err != nil {
				t.Fatal(err)
			}
			res, err := backup.Run(ctx, checktest.Writer(t, st, r), nil,
				backup.Options{Path: src, Hostname: "test", Workers: 2, DryRun: dryRun})
			if err != nil {
				t.Fatal(err)
			}
			// Only what differs from the first backup: its time, no
			// chunk.
			if sum := res.Snapshot.Summary; sum.BytesAdded > size/10 || sum.BlobsAdded > 2 {
				t.Fatalf("%d blobs, %d bytes stored again (summary %+v)", sum.BlobsAdded, sum.BytesAdded, sum)
			}
			if err := r.Index().Err(); err != nil {
				t.Fatal(err)
			}
			if got := repotest.DiskIndexFiles(t, filepath.Dir(path)); len(got) != 1 || got[0] != path {
				t.Fatalf("on-disk index files %v, want the rebuilt %s", got, path)
			}
		})
	}
}
