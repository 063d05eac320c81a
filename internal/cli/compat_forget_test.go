package cli

import (
	"strconv"
	"strings"
	"testing"
)

// TestCompatForget: forget's result lines in Cloudstic's words ("N
// snapshots would be removed", "would remove N snapshots:", "N snapshots
// have been removed", "No snapshots to remove"), its tables of snapshots
// as list's, and Cloudstic's semantics of a filter without keep rules:
// forget -tag T removes the snapshots tagged T. A forget that selects
// nothing at all is still refused.
func TestCompatForget(t *testing.T) {
	dir := t.TempDir()
	_, ids := compatRepo(t, dir, 4, []string{"daily"}, []string{"weekly"}, []string{"daily"}, nil)

	r := uxRun(t, dir, "forget")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "-keep-*") || !strings.Contains(r.stderr, "-tag") {
		t.Errorf("forget with no selection: exit %d, %q", r.code, r.stderr)
	}

	steps := []struct {
		name    string
		args    []string
		phrase  string // the line a script reads the count from
		count   int
		removed []string // ids the table under "remove"/"would remove" shows
		left    int      // snapshots list shows afterwards
	}{
		{"dry run", []string{"-keep-last", "1", "-dry-run"}, "snapshots would be removed", 3, []string{ids[2], ids[1], ids[0]}, 4},
		{"tag, no keep rule", []string{"-tag", "daily"}, "snapshots have been removed", 2, []string{ids[2], ids[0]}, 2},
		{"keep rule", []string{"-keep-last", "1"}, "snapshots have been removed", 1, []string{ids[1]}, 1},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			out := uxOK(t, dir, append([]string{"forget"}, s.args...)...).stdout
			if n := compatLeadingInt(t, out, s.phrase); n != s.count {
				t.Errorf("%q: %d, want %d\n%s", s.phrase, n, s.count, out)
			}
			_, table, ok := strings.Cut(out, "remove "+strconv.Itoa(s.count)+" snapshots:\n")
			if !ok {
				t.Fatalf("no %q line:\n%s", "remove N snapshots:", out)
			}
			var got []string
			for _, row := range compatRows(t, table) {
				got = append(got, row.Hash)
			}
			if strings.Join(got, ",") != strings.Join(s.removed, ",") {
				t.Errorf("removed rows %v, want %v\n%s", got, s.removed, out)
			}
			if list := uxOK(t, dir, "list").stdout; len(compatRows(t, list)) != s.left {
				t.Errorf("%d snapshots left, want %d:\n%s", len(compatRows(t, list)), s.left, list)
			}
		})
	}
	if out := uxOK(t, dir, "forget", "-keep-last", "5").stdout; !strings.Contains(out, "\nNo snapshots to remove\n") {
		t.Errorf("nothing to remove:\n%s", out)
	}
	if out := uxOK(t, dir, "forget", "-dry-run", "-keep-last", "1").stdout; !strings.Contains(out, "\n0 snapshots would be removed (dry run)\n") {
		t.Errorf("dry run removing nothing:\n%s", out)
	}
	// By id there are no groups: no heading of one.
	if out := uxOK(t, dir, "forget", "-dry-run", ids[3]).stdout; strings.Contains(out, "Snapshots for") || !strings.Contains(out, "would remove 1 snapshots:") {
		t.Errorf("forget by id:\n%s", out)
	}
}
