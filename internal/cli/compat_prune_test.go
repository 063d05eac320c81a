package cli

import (
	"strconv"
	"strings"
	"testing"
)

// TestCompatPrune: prune's result lines in Cloudstic's words: "Prune
// complete." with "Objects deleted:" and "Space reclaimed:", or on a dry
// run "Prune dry run complete." with "Objects would delete:"; forget
// -prune prints the same after forget's lines.
func TestCompatPrune(t *testing.T) {
	dir := t.TempDir()
	compatRepo(t, dir, 3)
	uxOK(t, dir, "forget", "-keep-last", "1")

	// -json: Cloudstic's PruneResult fields, under its names.
	var doc struct {
		ObjectsDeleted, ObjectsScanned int
		BytesReclaimed                 int64
		DryRun                         bool
	}
	uxJSON(t, uxOK(t, dir, "prune", "-dry-run", "-json").stdout, &doc)
	if !doc.DryRun || doc.ObjectsDeleted == 0 || doc.ObjectsScanned < doc.ObjectsDeleted || doc.BytesReclaimed <= 0 {
		t.Errorf("prune -dry-run -json: %+v", doc)
	}

	dry := uxOK(t, dir, "prune", "-dry-run").stdout
	if !strings.Contains(dry, "Prune dry run complete.\n") {
		t.Errorf("dry run:\n%s", dry)
	}
	if n, err := strconv.Atoi(compatField(t, dry, "Objects would delete:")); err != nil || n == 0 {
		t.Errorf("Objects would delete: %d, %v\n%s", n, err, dry)
	}

	out := uxOK(t, dir, "prune").stdout
	if !strings.Contains(out, "Prune complete.\n") {
		t.Errorf("no %q:\n%s", "Prune complete.", out)
	}
	deleted, err := strconv.Atoi(compatField(t, out, "Objects deleted:"))
	if err != nil || deleted == 0 {
		t.Errorf("Objects deleted: %d, %v\n%s", deleted, err, out)
	}
	if _, err := strconv.Atoi(compatField(t, out, "Objects scanned:")); err != nil {
		t.Errorf("Objects scanned: %v", err)
	}
	if v := compatField(t, out, "Space reclaimed:"); !strings.HasSuffix(v, "B") || v == "0 B" {
		t.Errorf("Space reclaimed: %q\n%s", v, out)
	}

	// Nothing left to delete: a second prune says 0.
	if n := compatField(t, uxOK(t, dir, "prune").stdout, "Objects deleted:"); n != "0" {
		t.Errorf("second prune deleted %s objects", n)
	}

	// forget -prune: forget's line, then prune's.
	uxOK(t, dir, "backup", "-source", "local:"+dir+"/src")
	out = uxOK(t, dir, "forget", "-keep-last", "1", "-prune").stdout
	if compatLeadingInt(t, out, "snapshots have been removed") != 1 || !strings.Contains(out, "Prune complete.\n") ||
		strings.Index(out, "have been removed") > strings.Index(out, "Prune complete.") {
		t.Errorf("forget -prune:\n%s", out)
	}
}
