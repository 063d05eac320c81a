package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompatCheck: check's summary in Cloudstic's words: "Snapshots
// checked:", "Errors found:", and "repository is healthy" only when it is;
// on stderr, as Cloudstic prints it (a script reads it with 2>&1 or
// 2>file), nothing on stdout but -json's document.
func TestCompatCheck(t *testing.T) {
	dir := t.TempDir()
	compatRepo(t, dir, 2)
	ok := uxOK(t, dir, "check")
	out := ok.stderr
	if ok.stdout != "" {
		t.Errorf("check printed on stdout:\n%s", ok.stdout)
	}
	if !strings.Contains(out, "Repository check complete.\n") || !strings.Contains(out, "repository is healthy") {
		t.Errorf("healthy check:\n%s", out)
	}
	if v := compatField(t, out, "Snapshots checked:"); v != "2" {
		t.Errorf("Snapshots checked: %q, want 2", v)
	}
	if v := compatField(t, out, "Errors found:"); v != "0" {
		t.Errorf("Errors found: %q, want 0", v)
	}

	var doc struct {
		SnapshotsChecked, ObjectsVerified int
		Errors                            []struct{ Key, Type, Message string }
	}
	uxJSON(t, uxOK(t, dir, "check", "-json").stdout, &doc)
	if doc.SnapshotsChecked != 2 || doc.ObjectsVerified == 0 || doc.Errors == nil || len(doc.Errors) != 0 {
		t.Errorf("check -json: %+v", doc)
	}

	// A pack gone: errors, counted, and no "healthy".
	packs, err := filepath.Glob(filepath.Join(dir, "store", "data", "*", "*"))
	if err != nil || len(packs) == 0 {
		t.Fatalf("no packs found: %v", err)
	}
	for _, p := range packs {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	r := uxRun(t, dir, "check")
	if r.code == ExitOK || strings.Contains(r.stderr, "healthy") || compatField(t, r.stderr, "Errors found:") == "0" || r.stdout != "" {
		t.Errorf("damaged check: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	r = uxRun(t, dir, "check", "-json")
	uxJSON(t, r.stdout, &doc)
	if r.code == ExitOK || len(doc.Errors) == 0 || doc.Errors[0].Key == "" || doc.Errors[0].Type == "" || doc.Errors[0].Message == "" {
		t.Errorf("damaged check -json: exit %d, %+v", r.code, doc)
	}
}
