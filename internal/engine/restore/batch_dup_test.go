package restore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/cloudstic/cloudstic/internal/store/local"
	"github.com/cloudstic/cloudstic/internal/store/wrap"
)

// TestBatchedRestoreDuplicates restores small files of which several have
// the same content (one blob, one location): blobs are decrypted in place
// in the batch's read, so each later file of a content reads its own copy.
// Every file comes back intact, with at most one more read per repeat.
func TestBatchedRestoreDuplicates(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	contents := []string{"alpha", "beta", "alpha", "gamma", "alpha", "beta"} // 3 repeats
	for i, c := range contents {
		data := []byte(fmt.Sprintf("%s %0200d", c, 7))
		if err := os.WriteFile(filepath.Join(src, fmt.Sprintf("f%d", i)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var ranges atomic.Int64 // GETRANGE requests
	counted := wrap.NewLogging(local.New(t.TempDir()), func(format string, args ...any) {
		if len(args) > 0 && args[0] == "GETRANGE" {
			ranges.Add(1)
		}
	})
	r, l, res := backedUpInto(t, counted, src)
	before := ranges.Load()
	out := filepath.Join(t.TempDir(), "out")
	got, err := Run(ctx, r, l, res.Snapshot.Tree, Options{Output: out, Workers: 1})
	if err != nil || len(got.Damaged) != 0 || got.Files != int64(len(contents)) {
		t.Fatalf("Run: %v, damaged %v, %d files", err, got.Damaged, got.Files)
	}
	for i := range contents {
		name := fmt.Sprintf("f%d", i)
		want, _ := os.ReadFile(filepath.Join(src, name)) // written above
		data, err := os.ReadFile(filepath.Join(out, name))
		if err != nil || string(data) != string(want) {
			t.Errorf("%s: %v, content ok=%v", name, err, string(data) == string(want))
		}
	}
	// The root tree, the batch, and at most one more per repeat.
	if reads := ranges.Load() - before; reads > 5 {
		t.Errorf("%d range reads, want at most 5", reads)
	}
}
