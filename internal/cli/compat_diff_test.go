package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCompatDiff: diff prints Cloudstic's lines on stdout, a header
// "Diffing A vs B" and one "A|M|D path" per change, and nothing else
// there (a script counts every other line as a change; our summary goes
// to stderr).
func TestCompatDiff(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	uxWrite(t, filepath.Join(src, "keep.txt"), "same")
	uxWrite(t, filepath.Join(src, "gone.txt"), "old")
	uxWrite(t, filepath.Join(src, "sub", "edit.txt"), "v1")
	uxOK(t, dir, "init", "-no-encryption")
	var b1, b2 struct {
		SnapshotID string `json:"snapshot_id"`
	}
	uxJSON(t, uxOK(t, dir, "backup", "-source", "local:"+src, "-json").stdout, &b1)
	if err := os.Remove(filepath.Join(src, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	uxWrite(t, filepath.Join(src, "sub", "edit.txt"), "version 2")
	uxWrite(t, filepath.Join(src, "new", "file.txt"), "hello")
	uxJSON(t, uxOK(t, dir, "backup", "-source", "local:"+src, "-json").stdout, &b2)

	// -json: Cloudstic's DiffResult fields, under its names.
	var doc struct {
		Ref1, Ref2 string
		Changes    []struct{ Type, Path string }
	}
	uxJSON(t, uxOK(t, dir, "diff", "-json", b1.SnapshotID, b2.SnapshotID).stdout, &doc)
	var got []string
	for _, c := range doc.Changes {
		got = append(got, c.Type+" "+c.Path)
	}
	slices.Sort(got)
	if doc.Ref1 != b1.SnapshotID || doc.Ref2 != b2.SnapshotID ||
		!slices.Equal(got, []string{"A new", "A new/file.txt", "D gone.txt", "M sub/edit.txt"}) {
		t.Errorf("diff -json: %+v", doc)
	}

	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"two snapshots", []string{b1.SnapshotID, b2.SnapshotID}, []string{"A new", "A new/file.txt", "D gone.txt", "M sub/edit.txt"}},
		{"latest", []string{b1.SnapshotID, "latest"}, []string{"A new", "A new/file.txt", "D gone.txt", "M sub/edit.txt"}},
		{"no changes", []string{b2.SnapshotID, b2.SnapshotID}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := uxOK(t, dir, append([]string{"diff"}, tc.args...)...)
			lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
			if lines[0] != "Diffing "+resolveRef(tc.args[0], b2.SnapshotID)+" vs "+resolveRef(tc.args[1], b2.SnapshotID) {
				t.Errorf("header %q", lines[0])
			}
			got := lines[1:]
			slices.Sort(got) // the order of the changes is not Cloudstic's to promise
			if !slices.Equal(got, tc.want) && (len(got) != 0 || len(tc.want) != 0) {
				t.Errorf("changes %q, want %q\nstdout:\n%s", got, tc.want, r.stdout)
			}
			if !strings.Contains(r.stderr, "added") {
				t.Errorf("no summary on stderr: %q", r.stderr)
			}
		})
	}
}

// resolveRef is the id diff's header names for ref: latest is the newest.
func resolveRef(ref, latest string) string {
	if ref == "latest" {
		return latest
	}
	return ref
}
