//go:build unix

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// statsOut is the -json document of stats.
type statsOut struct {
	Mode   string `json:"mode"`
	Totals struct {
		Snapshots       int   `json:"snapshots"`
		RestoreFiles    int64 `json:"restore_files"`
		RestoreSize     int64 `json:"restore_size"`
		UniqueFiles     int64 `json:"unique_files"`
		UniqueFilesSize int64 `json:"unique_files_size"`
		StoredSize      int64 `json:"stored_size"`
		MissingBlobs    int64 `json:"missing_blobs"`
	} `json:"totals"`
	DedupRatio float64 `json:"dedup_ratio"`
}

// growthOut is one row of stats -growth -json.
type growthOut struct {
	SnapshotID string `json:"snapshot_id"`
	Files      int64  `json:"files"`
	Added      int64  `json:"added"`
	StoredSize int64  `json:"stored_size"`
}

// TestStats measures three snapshots of a growing tree on every kind of
// store: totals against the source, every mode's text, the growth table.
func TestStats(t *testing.T) {
	t.Parallel()
	for _, kind := range []storeKind{{"local", localStore}, {"s3", s3Store}, {"seaweedfs", seaweedfsStore}, {"sftp", sftpStore}} {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t, kind)
			src := filepath.Join(t.TempDir(), "src")
			data := randomBytes(5, 300000)
			var ids []string
			for i := range 3 {
				if err := os.MkdirAll(src, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(src, "f"+string(rune('0'+i))), data[i*100000:(i+1)*100000], 0o644); err != nil {
					t.Fatal(err)
				}
				ids = append(ids, backupJSON(t, r, src).SnapshotID)
			}
			var all statsOut
			decodeJSON(t, mustRun(t, r.with("stats", "-json")...), &all)
			// Snapshots hold 1, 2 and 3 files of 100000 bytes.
			if tt := all.Totals; tt.Snapshots != 3 || tt.RestoreFiles != 6 || tt.RestoreSize != 600000 ||
				tt.UniqueFiles != 3 || tt.UniqueFilesSize != 300000 || tt.MissingBlobs != 0 || tt.StoredSize < 300000 {
				t.Errorf("stats -json: %+v", tt)
			}
			if all.DedupRatio != 2 {
				t.Errorf("dedup ratio %v, want 2", all.DedupRatio)
			}
			var one statsOut
			decodeJSON(t, mustRun(t, r.with("stats", ids[0][:8], "-json", "-mode", "files-by-contents")...), &one)
			if one.Mode != "files-by-contents" || one.Totals.Snapshots != 1 || one.Totals.UniqueFiles != 1 {
				t.Errorf("stats of the first snapshot: %+v", one)
			}
			for mode, want := range map[string]string{"restore-size": "Total size:", "files-by-contents": "Distinct files:",
				"raw-data": "Stored size:", "blobs-per-file": "Blobs per file:"} {
				out := mustRun(t, r.with("stats", "-mode", mode)...).stdout
				if !strings.Contains(out, mode+" mode") || !strings.Contains(out, want) || !strings.Contains(out, "deduplication 2.00x") {
					t.Errorf("stats -mode %s:\n%s", mode, out)
				}
			}
			var rows []growthOut
			decodeJSON(t, mustRun(t, r.with("stats", "-growth", "-json")...), &rows)
			if len(rows) != 3 {
				t.Fatalf("growth rows: %+v", rows)
			}
			for i, row := range rows {
				if row.SnapshotID != ids[i] || row.Files != int64(i+1) || row.Added <= 0 {
					t.Errorf("growth row %d: %+v", i, row)
				}
				if i > 0 && row.StoredSize != rows[i-1].StoredSize+row.Added {
					t.Errorf("growth row %d: size %d is not %d + %d", i, row.StoredSize, rows[i-1].StoredSize, row.Added)
				}
			}
			if rows[2].StoredSize != all.Totals.StoredSize {
				t.Errorf("growth ends at %d, stats says %d", rows[2].StoredSize, all.Totals.StoredSize)
			}
			table := mustRun(t, r.with("stats", "-growth")...).stdout
			if !strings.Contains(table, "REPOSITORY") || strings.Count(table, "\n") != 4 || strings.Contains(table, "repository size") {
				t.Errorf("growth table (no sparkline when not a terminal):\n%s", table)
			}
			wantOneLineError(t, run(t, r.with("stats", "-mode", "raw")...), "-mode", "raw-data")
			wantOneLineError(t, run(t, r.with("stats", "abcdef0")...), "abcdef0")
		})
	}
}
