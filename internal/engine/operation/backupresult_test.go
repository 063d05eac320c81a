package operation_test

import (
	"context"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
)

// TestBackupResultSnapshots: Backup counts the repository's snapshots
// after it, the one it wrote included (what -metrics-file reports).
func TestBackupResultSnapshots(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	checktest.NewRepo(t, dir)
	src := t.TempDir()
	checktest.WriteFile(t, src, "f", 1, 10<<10)
	for _, tc := range []struct {
		name string
		opts backup.Options
		want int
	}{
		{"first", backup.Options{Path: src}, 1},
		{"second", backup.Options{Path: src}, 2},
		{"dry run writes none", backup.Options{Path: src, DryRun: true}, 2},
		{"unchanged writes none", backup.Options{Path: src, IgnoreEmpty: true}, 2},
		{"third", backup.Options{Path: src}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := operation.Backup(ctx, openRepo(t, dir), tc.opts, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Snapshots != tc.want {
				t.Errorf("Snapshots = %d, want %d", res.Snapshots, tc.want)
			}
		})
	}
}
