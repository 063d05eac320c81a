package restore

import (
	"context"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// TestBatcher checks how files are grouped: single-blob files of one pack
// whose blobs lie close together share a batch, even when files of other
// packs come between them; anything else goes alone.
func TestBatcher(t *testing.T) {
	ctx := context.Background()
	r, _, err := repo.Init(ctx, local.New(t.TempDir()), repo.InitOptions{NoEncryption: true})
	if err != nil {
		t.Fatal(err)
	}
	blob := func(i byte) id.ID { return id.ID{i} }
	packA, packB := id.ID{0xa}, id.ID{0xb}
	r.Index().Add(packA, []pack.Entry{
		{ID: blob(1), Offset: 0, Length: 100},
		{ID: blob(2), Offset: 100, Length: 100},
		{ID: blob(3), Offset: 200, Length: 100},
		{ID: blob(4), Offset: 10 << 20, Length: 100}, // far away: no shared read
	})
	r.Index().Add(packB, []pack.Entry{{ID: blob(5), Offset: 0, Length: 100}})
	file := func(name string, blobs ...id.ID) entry {
		return entry{rel: name, node: tree.Node{Name: name, Type: tree.TypeFile, Content: blobs}}
	}
	tests := []struct {
		name  string
		files []entry
		want  []int // files per job, in order (1 = a single-file job)
	}{
		{"one pack, adjacent", []entry{file("a", blob(1)), file("b", blob(2)), file("c", blob(3))}, []int{3}},
		{"pack changes", []entry{file("a", blob(1)), file("b", blob(2)), file("e", blob(5))}, []int{2, 1}},
		{"packs interleaved", []entry{file("a", blob(1)), file("e", blob(5)), file("b", blob(2)), file("c", blob(3))}, []int{3, 1}},
		{"too far apart", []entry{file("a", blob(1)), file("d", blob(4)), file("b", blob(2))}, []int{1, 1, 1}},
		{"multi-blob file alone", []entry{file("a", blob(1)), file("ab", blob(1), blob(2)), file("b", blob(2))}, []int{1, 2}},
		{"unknown blob alone", []entry{file("x", blob(9)), file("a", blob(1)), file("b", blob(2))}, []int{1, 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := &batcher{r: r}
			var jobs []job
			for _, f := range tc.files {
				jobs = append(jobs, b.add(f)...)
			}
			jobs = append(jobs, b.flush()...)
			var got []int
			total := 0
			for _, j := range jobs {
				if j.batch != nil {
					got = append(got, len(j.batch.files))
					total += len(j.batch.files)
					if span := j.batch.end - j.batch.start; span > maxBatchSpan {
						t.Errorf("batch reads %d bytes", span)
					}
				} else {
					got = append(got, 1)
					total++
				}
			}
			if total != len(tc.files) {
				t.Fatalf("%d files in jobs, want %d", total, len(tc.files))
			}
			if len(got) != len(tc.want) {
				t.Fatalf("jobs %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("jobs %v, want %v", got, tc.want)
				}
			}
		})
	}
}

// TestBatcherBoundsOpenBatches keeps at most maxOpenBatches batches open:
// the oldest is closed (and sent) to make room, and every file is sent once.
func TestBatcherBoundsOpenBatches(t *testing.T) {
	ctx := context.Background()
	r, _, err := repo.Init(ctx, local.New(t.TempDir()), repo.InitOptions{NoEncryption: true})
	if err != nil {
		t.Fatal(err)
	}
	b := &batcher{r: r}
	var sent []job
	files := 0
	for i := range maxOpenBatches + 10 {
		p, blob := id.ID{1, byte(i)}, id.ID{2, byte(i)}
		r.Index().Add(p, []pack.Entry{{ID: blob, Offset: 0, Length: 100}})
		sent = append(sent, b.add(entry{rel: "f", node: tree.Node{Type: tree.TypeFile, Content: []id.ID{blob}}})...)
		files++
		if len(b.open) > maxOpenBatches {
			t.Fatalf("%d batches open after %d packs", len(b.open), i+1)
		}
	}
	if len(sent) != 10 {
		t.Errorf("%d jobs sent before the flush, want the 10 oldest", len(sent))
	}
	sent = append(sent, b.flush()...)
	if len(sent) != files || len(b.open) != 0 {
		t.Errorf("%d jobs for %d files, %d batches still open", len(sent), files, len(b.open))
	}
}
