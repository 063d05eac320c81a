package ui

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/fsmeta"
	"github.com/cloudstic/cloudstic/internal/engine/restore"
)

// TestConfineOutlivesSwap: a target restoreTarget accepted stays inside
// -restore-root even when a local user replaces one of its directories
// with a symbolic link to elsewhere before the restore opens it (the
// check-then-use race of a path check alone).
func TestConfineOutlivesSwap(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	target, err := restoreTarget(filepath.Join(root, "a", "b"), root)
	if err != nil {
		t.Fatal(err)
	}
	opts := restore.Options{Output: target}
	within, err := confine(root, &opts)
	if err != nil {
		t.Fatal(err)
	}
	defer within.Close() //nolint:errcheck // a directory handle
	if opts.Within != within || opts.Output != filepath.Join("a", "b") {
		t.Fatalf("confined to %v as %q, want the root and a/b", opts.Within, opts.Output)
	}
	// The swap, after the check.
	if err := os.Remove(filepath.Join(root, "a")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "a")); err != nil {
		t.Fatal(err)
	}
	// What the restore engine does first with a confined output.
	if w, err := fsmeta.NewWriterIn(opts.Within, opts.Output, fsmeta.DefaultWriterOptions()); err == nil {
		w.Close() //nolint:errcheck // a directory handle
		t.Fatal("opened the swapped target, want refused")
	}
	if entries, err := os.ReadDir(outside); err != nil || len(entries) != 0 {
		t.Fatalf("wrote outside the restore root: %v %v", entries, err)
	}
	if _, err := confine(root, &restore.Options{Output: outside}); err == nil {
		t.Fatal("confined a target outside the root")
	}
}
