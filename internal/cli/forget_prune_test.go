package cli

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// TestForgetPruneLocked: forget -prune that removed snapshots but could
// not prune (a backup holds a shared lock) says both on its last line and
// exits 1; with -json it prints one document, which says both too.
func TestForgetPruneLocked(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	uxWrite(t, filepath.Join(src, "f"), "data")
	uxOK(t, dir, "init", "-no-encryption")
	for range 5 {
		uxOK(t, dir, "backup", "-source", "local:"+src)
	}
	ctx := context.Background()
	held, err := lock.AcquireShared(ctx, local.New(filepath.Join(dir, "store")), "backup", lock.Options{Hostname: "other-host", PID: 7})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = held.Release(ctx) }() // the test's own lock; a failed release only leaves a lock to expire

	r := uxRun(t, dir, "forget", "-keep-last", "3", "-prune")
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	last := lines[len(lines)-1]
	if r.code != ExitError || !strings.Contains(r.stdout, "2 snapshots have been removed") ||
		!strings.Contains(last, "removed 2 snapshots") || !strings.Contains(last, "other-host (pid 7)") {
		t.Errorf("text: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}

	r = uxRun(t, dir, "forget", "-keep-last", "1", "-prune", "-json")
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	var doc struct {
		Removed    []string `json:"removed"`
		Prune      any      `json:"prune"`
		PruneError string   `json:"prune_error"`
	}
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("-json: %v\n%s", err, r.stdout)
	}
	var more json.RawMessage
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		t.Errorf("-json printed a second document: %s", more)
	}
	if r.code != ExitError || len(doc.Removed) != 2 || doc.Prune != nil || !strings.Contains(doc.PruneError, "other-host (pid 7)") {
		t.Errorf("-json: exit %d, %+v\nstderr: %s", r.code, doc, r.stderr)
	}
	if list := uxOK(t, dir, "list").stdout; !strings.HasPrefix(list, "1 snapshots\n") {
		t.Errorf("want 1 snapshot left:\n%s", list)
	}
}
