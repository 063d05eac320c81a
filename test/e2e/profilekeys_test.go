//go:build unix

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestProfileBackupKeys: a profile's excludes, exclude_file, ignore_empty,
// volume_uuid and tags apply to `backup -profile`, and flags on the
// command line win over them.
func TestProfileBackupKeys(t *testing.T) {
	t.Parallel()
	r := newLocalRepo(t)
	src := filepath.Join(t.TempDir(), "src")
	for _, f := range []string{"keep.txt", "a.tmp", "cache/c.bin", "x.log", "keep.log", "data.dat"} {
		p := filepath.Join(src, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	exFile := filepath.Join(dir, "excludes")
	if err := os.WriteFile(exFile, []byte("# logs\n*.log\n!keep.log\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	profiles := filepath.Join(dir, "profiles.yaml")
	yaml := fmt.Sprintf(`version: 1
profiles:
  job:
    source: local:%s
    tags: [nightly]
    excludes: ["*.tmp", "cache/"]
    exclude_file: %s
    ignore_empty: true
    volume_uuid: 1234-ABCD
`, src, exFile)
	if err := os.WriteFile(profiles, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	backup := func(args ...string) (result, backupOut) {
		t.Helper()
		res := mustRun(t, r.with("backup", append([]string{"-json", "-profile", "job", "-profiles-file", profiles}, args...)...)...)
		var out backupOut
		decodeJSON(t, res, &out)
		return res, out
	}
	restored := func(id string) []string {
		t.Helper()
		dst := t.TempDir()
		mustRun(t, r.with("restore", "-output", dst, id)...)
		var names []string
		for rel, e := range scanTree(t, dst) {
			if e.typ() != 0o040000 {
				names = append(names, rel)
			}
		}
		slices.Sort(names)
		return names
	}

	_, first := backup()
	s := catSnapshot(t, r, first.SnapshotID)
	if s.Snapshot.Volume == nil || s.Snapshot.Volume.UUID != "1234-abcd" || !slices.Equal(s.Snapshot.Tags, []string{"nightly"}) {
		t.Errorf("profile snapshot: volume %+v tags %v, want 1234-abcd and [nightly]", s.Snapshot.Volume, s.Snapshot.Tags)
	}
	if s.Snapshot.Excludes == nil || !slices.Equal(s.Snapshot.Excludes.Patterns, []string{"*.tmp", "cache/", "*.log", "!keep.log"}) {
		t.Errorf("recorded excludes %+v, want the profile's and its file's", s.Snapshot.Excludes)
	}
	if got, want := restored(first.SnapshotID), []string{"data.dat", "keep.log", "keep.txt"}; !slices.Equal(got, want) {
		t.Errorf("profile backup restored %v, want %v", got, want)
	}
	// ignore_empty: nothing changed, nothing written.
	if res, out := backup(); out.SnapshotID != "" || !strings.Contains(res.stdout, `"unchanged": true`) {
		t.Errorf("unchanged profile backup with ignore_empty: %v", res)
	}

	// The command line wins: its -exclude replaces the profile's list (the
	// profile's exclude_file still applies), its -volume-uuid and
	// -ignore-empty-snapshot=false replace the profile's.
	_, second := backup("-exclude", "*.dat", "-volume-uuid", "ffff-0000", "-ignore-empty-snapshot=false", "-tag", "manual")
	if second.SnapshotID == "" {
		t.Fatal("-ignore-empty-snapshot=false on the command line: no snapshot written")
	}
	s = catSnapshot(t, r, second.SnapshotID)
	if s.Snapshot.Volume == nil || s.Snapshot.Volume.UUID != "ffff-0000" || !slices.Equal(s.Snapshot.Tags, []string{"manual"}) {
		t.Errorf("command line over the profile: volume %+v tags %v", s.Snapshot.Volume, s.Snapshot.Tags)
	}
	if got, want := restored(second.SnapshotID), []string{"a.tmp", "cache/c.bin", "keep.log", "keep.txt"}; !slices.Equal(got, want) {
		t.Errorf("with -exclude on the command line restored %v, want %v", got, want)
	}
	if third := backupJSON(t, r, src, "-exclude-file", exFile, "-volume-uuid", "1234-abcd"); third.Parent != first.SnapshotID {
		t.Errorf("plain backup with the profile's volume: parent %q, want %s", third.Parent, first.SnapshotID)
	}
}
