package repo

import (
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo/index"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
)

// TestIndexFileCount checks that counting the index files of packs given
// one at a time agrees with the files splitIndex makes of them in one
// call, whether packs or bytes end a file, and that EndCall starts one.
func TestIndexFileCount(t *testing.T) {
	repeat := func(n, blobs int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = blobs
		}
		return out
	}
	tests := []struct {
		name  string
		blobs []int
		want  int
	}{
		{"none", nil, 0},
		{"one", []int{3}, 1},
		{"a full file of packs and one more", repeat(maxPacksPerIndexFile+1, 1), 2},
		{"bytes end the files", repeat(5, 150_000), 3},
		{"a pack larger than a file", []int{10, 400_000, 10}, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			packs := make([]index.PackBlobs, len(tc.blobs))
			var c IndexFileCount
			for i, n := range tc.blobs {
				packs[i].Blobs = make([]pack.Entry, n)
				c.Add(n)
			}
			if got := len(splitIndex(packs)); got != tc.want {
				t.Errorf("splitIndex made %d files, want %d", got, tc.want)
			}
			if c.Files() != tc.want {
				t.Errorf("counted %d files, want %d", c.Files(), tc.want)
			}
		})
	}
	var c IndexFileCount
	for range 3 {
		c.Add(1)
		c.Add(1)
		c.EndCall()
	}
	if c.Files() != 3 {
		t.Errorf("three calls of two packs: %d files, want 3", c.Files())
	}
}
