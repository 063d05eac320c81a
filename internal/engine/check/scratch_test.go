package check_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/check"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/index"
	"github.com/cloudstic/cloudstic/internal/store"
)

// TestScratchIndex checks what the on-disk scratch index must keep of the
// in-memory index check used before: a blob with copies in several packs
// is located in one that exists, a pack listed by two index files is
// compared with its header once and counted once, and nothing is left
// behind, in memory or on disk.
func TestScratchIndex(t *testing.T) {
	cases := []struct {
		name string
		// arrange changes the repository and returns the key of the pack
		// expected to be reported missing ("" for none).
		arrange func(t *testing.T, dir string, st store.Store, r *repo.Repository) string
	}{
		{name: "healthy", arrange: func(*testing.T, string, store.Store, *repo.Repository) string { return "" }},
		{name: "first copy's pack gone", arrange: func(t *testing.T, dir string, st store.Store, r *repo.Repository) string {
			packs, files := checktest.Listings(t, r)
			i := checktest.FirstDataPack(t, packs)
			dup := checktest.CopyPack(t, dir, st, r, packs[i])
			// The gone pack is listed first, so the copy in it is the
			// one added first.
			checktest.ReplaceIndex(t, st, r, files, append([]index.PackBlobs{packs[i], dup}, append(packs[:i:i], packs[i+1:]...)...))
			key := repo.PackKey(packs[i].ID)
			if err := os.Remove(filepath.Join(dir, filepath.FromSlash(key))); err != nil {
				t.Fatal(err)
			}
			return repo.DescribePack(packs[i].ID)
		}},
		{name: "pack listed twice", arrange: func(t *testing.T, dir string, st store.Store, r *repo.Repository) string {
			packs, _ := checktest.Listings(t, r)
			if _, err := checktest.Writer(t, st, r).WriteIndex(context.Background(), packs[:1]); err != nil {
				t.Fatal(err)
			}
			return ""
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			dir, st, _, _ := checktest.BackedUp(t, 3, 300<<10)
			missing := c.arrange(t, dir, st, checktest.Open(t, st))

			r := checktest.Open(t, st)
			indexDir := filepath.Join(t.TempDir(), "index")
			r.SetDiskIndex(repo.DiskIndex{Dir: indexDir})
			packs, _ := checktest.Listings(t, r)
			distinct := map[id.ID]bool{}
			for _, p := range packs {
				if missing == "" || repo.DescribePack(p.ID) != missing {
					distinct[p.ID] = true
				}
			}
			var progress check.Progress
			res, err := check.Run(ctx, r, check.Options{Progress: &progress})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range res.Errors {
				if p.Key != missing {
					t.Errorf("unexpected error %v", p)
				} else if !strings.Contains(p.Message, "no checked snapshot needs its blobs") {
					t.Errorf("the snapshot's blobs are in the copy, yet: %v", p)
				}
			}
			if missing != "" && res.OK() {
				t.Errorf("the gone pack is not reported: %v", res.Notes)
			}
			for _, n := range res.Notes {
				if strings.Contains(n.Message, "used by no snapshot") {
					t.Errorf("blobs the snapshot uses counted as unused: %v", n)
				}
			}
			if got := progress.Packs.Load(); got != int64(len(distinct)) {
				t.Errorf("compared %d packs with their headers, want %d", got, len(distinct))
			}
			if r.Index().Len() != 0 || r.Index().Base() != nil {
				t.Errorf("check left an index: %d blobs, on-disk part %v", r.Index().Len(), r.Index().Base())
			}
			if left, _ := os.ReadDir(indexDir); len(left) != 0 {
				t.Errorf("check left files in the index directory: %v", left)
			}
		})
	}
}
