package operation

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
)

// TestScanTotalsExcludes: the pre-walk that counts the totals leaves out
// what the backup leaves out (it uses the engine's exclude.Filter), so the
// totals are reached and never exceeded.
func TestScanTotalsExcludes(t *testing.T) {
	src := t.TempDir()
	files := map[string]int{
		"keep/a": 10, "keep/important.log": 3, "keep/x.log": 5, "node_modules/m/m.js": 7, "big": 100,
		"tagged/.nobackup": 0, "tagged/t": 9, "build/out": 4, "src/build/in": 6,
	}
	for rel, size := range files {
		p := filepath.Join(src, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(src, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name         string
		opts         backup.Options
		files, bytes int64
	}{
		{"no rules", backup.Options{Path: src}, 9, 144},
		{"source given as a link", backup.Options{Path: link}, 9, 144},
		{"all rules", backup.Options{Path: src, Excludes: []string{"node_modules/", "*.log", "!important.log", "/build"},
			ExcludeIfPresent: []string{".nobackup"}, ExcludeLargerThan: 99}, 3, 19},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tot scanTotals
			tot.scan(&tt.opts, make(chan struct{}))
			if !tot.complete.Load() || tot.files.Load() != tt.files || tot.bytes.Load() != tt.bytes {
				t.Errorf("scan: complete %v, %d files, %d bytes; want %d files, %d bytes",
					tot.complete.Load(), tot.files.Load(), tot.bytes.Load(), tt.files, tt.bytes)
			}
		})
	}
}

// TestScanTotalsStopped: a scan stopped before it ends has no totals
// (partial counts would show as the whole).
func TestScanTotalsStopped(t *testing.T) {
	src := t.TempDir()
	for _, d := range []string{"a", "b"} {
		if err := os.MkdirAll(filepath.Join(src, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	close(stop)
	var tot scanTotals
	tot.scan(&backup.Options{Path: src}, stop)
	if tot.complete.Load() {
		t.Errorf("a stopped scan says it is complete (%d files)", tot.files.Load())
	}
}
