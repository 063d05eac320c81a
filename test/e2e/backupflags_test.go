//go:build unix

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// listHosts is list -json with the fields these tests read.
type listHosts struct {
	ID      string    `json:"id"`
	Host    string    `json:"host"`
	Created time.Time `json:"created"`
}

// TestBackupHostTimeIgnoreEmpty covers -host, -time and
// -ignore-empty-snapshot on a real tree.
func TestBackupHostTimeIgnoreEmpty(t *testing.T) {
	t.Parallel()
	r := newLocalRepo(t)
	src := smallTree(t, 7)
	first := backupJSON(t, r, src, "-host", "laptop", "-time", "2020-01-02 03:04:05")
	var listed struct{ Snapshots []listHosts }
	decodeJSON(t, mustRun(t, r.with("list", "-json")...), &listed)
	list := listed.Snapshots
	want := time.Date(2020, 1, 2, 3, 4, 5, 0, time.Local)
	if len(list) != 1 || list[0].Host != "laptop" || !list[0].Created.Equal(want) {
		t.Fatalf("list %+v, want one snapshot of host laptop at %v", list, want)
	}

	// Nothing changed: scanned, reported, not written.
	res := mustRun(t, r.with("backup", "-source", "local:"+src, "-host", "laptop", "-ignore-empty-snapshot")...)
	if !strings.Contains(res.stdout, "Nothing changed since snapshot "+first.SnapshotID[:8]) || !strings.Contains(res.stdout, "Files:") {
		t.Errorf("unchanged backup said %v", res)
	}
	var doc struct {
		SnapshotID *string `json:"snapshot_id"`
		Unchanged  bool    `json:"unchanged"`
		Parent     string  `json:"parent"`
	}
	decodeJSON(t, mustRun(t, r.with("backup", "-json", "-source", "local:"+src, "-host", "laptop", "-ignore-empty-snapshot")...), &doc)
	if !doc.Unchanged || doc.SnapshotID != nil || doc.Parent != first.SnapshotID {
		t.Errorf("unchanged backup -json: %+v", doc)
	}
	if n := len(listJSON(t, r)); n != 1 {
		t.Errorf("%d snapshots after unchanged backups with -ignore-empty-snapshot, want 1", n)
	}

	// Another host has no parent: written. A change: written.
	backupJSON(t, r, src, "-host", "desktop", "-ignore-empty-snapshot")
	if err := os.WriteFile(filepath.Join(src, "one"), []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	changed := backupJSON(t, r, src, "-host", "laptop", "-ignore-empty-snapshot")
	if changed.Parent != first.SnapshotID {
		t.Errorf("changed backup's parent %s, want %s", changed.Parent, first.SnapshotID)
	}
	if n := len(listJSON(t, r)); n != 3 {
		t.Errorf("%d snapshots, want 3", n)
	}

	for _, tt := range []struct {
		name string
		args []string
		subs []string
	}{
		{"future time", []string{"-time", "2999-01-01"}, []string{"-time", "future"}},
		{"bad time", []string{"-time", "yesterday"}, []string{"-time", "yesterday"}},
		{"blank host", []string{"-host", " "}, []string{"-host"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, r.with("backup", append([]string{"-source", "local:" + src}, tt.args...)...)...)
			wantCode(t, res, 2)
			wantOneLineError(t, res, tt.subs...)
		})
	}
	if n := len(listJSON(t, r)); n != 3 {
		t.Errorf("%d snapshots after refused backups, want 3", n)
	}
}
