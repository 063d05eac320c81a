package restore

import (
	"context"
	"io"
	"slices"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// remoteStore declares the request cost of a store across a network
// around a real one, as S3's and SFTP's do.
type remoteStore struct{ store.Store }

func (remoteStore) RequestCost() int64 { return store.RemoteRequestCost }

// OpenRange streams from the store inside (or reads whole when it cannot
// stream), as a store across a network streams.
func (r remoteStore) OpenRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	return store.OpenRange(ctx, r.Store, key, off, n)
}

// TestBatcher checks how files are grouped: single-blob files of one pack
// whose blobs lie close together share a batch, even when files of other
// packs come between them or they come out of order; anything else goes
// alone. Over a store whose requests are dear, blobs further apart share a
// read, up to streamSpan.
func TestBatcher(t *testing.T) {
	ctx := context.Background()
	blob := func(i byte) id.ID { return id.ID{i} }
	packA, packB := id.ID{0xa}, id.ID{0xb}
	file := func(name string, blobs ...id.ID) entry {
		return entry{rel: name, node: tree.Node{Name: name, Type: tree.TypeFile, Content: blobs}}
	}
	tests := []struct {
		name   string
		remote bool
		files  []entry
		want   []int // files per job, sorted (1 = a single-file job)
	}{
		{"one pack, adjacent", false, []entry{file("a", blob(1)), file("b", blob(2)), file("c", blob(3))}, []int{3}},
		{"out of order", false, []entry{file("c", blob(3)), file("a", blob(1)), file("b", blob(2))}, []int{3}},
		{"pack changes", false, []entry{file("a", blob(1)), file("b", blob(2)), file("e", blob(5))}, []int{1, 2}},
		{"packs interleaved", false, []entry{file("a", blob(1)), file("e", blob(5)), file("b", blob(2)), file("c", blob(3))}, []int{1, 3}},
		{"too far apart", false, []entry{file("a", blob(1)), file("d", blob(4)), file("b", blob(2))}, []int{1, 2}},
		{"gap read over remotely", true, []entry{file("a", blob(1)), file("g", blob(6)), file("b", blob(2))}, []int{3}},
		{"gap not read over locally", false, []entry{file("a", blob(1)), file("g", blob(6)), file("b", blob(2))}, []int{1, 2}},
		{"span bounded remotely", true, []entry{file("a", blob(1)), file("d", blob(4)), file("b", blob(2))}, []int{1, 2}},
		{"multi-blob file of one pack joins remotely", true, []entry{file("a", blob(1)), file("bc", blob(2), blob(3)), file("b", blob(2))}, []int{3}},
		{"multi-blob file alone locally", false, []entry{file("a", blob(1)), file("bc", blob(2), blob(3)), file("b", blob(2))}, []int{1, 2}},
		{"multi-blob file of two packs alone", true, []entry{file("a", blob(1)), file("ae", blob(1), blob(5)), file("b", blob(2))}, []int{1, 2}},
		{"multi-blob file too spread alone", true, []entry{file("a", blob(1)), file("ad", blob(1), blob(4)), file("b", blob(2))}, []int{1, 2}},
		{"unknown blob alone", false, []entry{file("x", blob(9)), file("a", blob(1)), file("b", blob(2))}, []int{1, 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var st store.Store = local.New(t.TempDir())
			if tc.remote {
				st = remoteStore{st}
			}
			r, _, err := repo.Init(ctx, st, repo.InitOptions{NoEncryption: true})
			if err != nil {
				t.Fatal(err)
			}
			r.Index().Add(packA, []pack.Entry{
				{ID: blob(1), Offset: 0, Length: 100},
				{ID: blob(2), Offset: 100, Length: 100},
				{ID: blob(3), Offset: 200, Length: 100},
				{ID: blob(6), Offset: 2 << 20, Length: 100},  // a gap of 2 MiB
				{ID: blob(4), Offset: 40 << 20, Length: 100}, // beyond any one read
			})
			r.Index().Add(packB, []pack.Entry{{ID: blob(5), Offset: 0, Length: 100}})
			span := restoreShape(r).span
			b := newBatcher(r, 1, span)
			var jobs []job
			for _, f := range tc.files {
				jobs = append(jobs, b.add(t.Context(), f)...)
			}
			jobs = append(jobs, b.flush()...)
			var got []int
			total := 0
			for _, j := range jobs {
				if j.batch != nil {
					got = append(got, len(j.batch.files))
					total += len(j.batch.files)
					if n := j.batch.end - j.batch.start; n > span {
						t.Errorf("batch reads %d bytes, more than %d", n, span)
					}
				} else {
					got = append(got, 1)
					total++
				}
			}
			if total != len(tc.files) {
				t.Fatalf("%d files in jobs, want %d", total, len(tc.files))
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("jobs %v, want %v", got, tc.want)
			}
		})
	}
}

// TestBatcherBoundsWindow holds at most the window's files: the group
// added to least recently is closed (and sent) to make room, and every
// file is sent once.
func TestBatcherBoundsWindow(t *testing.T) {
	ctx := context.Background()
	r, _, err := repo.Init(ctx, local.New(t.TempDir()), repo.InitOptions{NoEncryption: true})
	if err != nil {
		t.Fatal(err)
	}
	b := newBatcher(r, 1, maxBatchSpan)
	b.window = 64
	sent := 0
	count := func(js []job) {
		for _, j := range js {
			if j.batch != nil {
				sent += len(j.batch.files)
			} else {
				sent++
			}
		}
	}
	files := 0
	for i := range b.window + 10 {
		p, blob := id.ID{1, byte(i)}, id.ID{2, byte(i)}
		r.Index().Add(p, []pack.Entry{{ID: blob, Offset: 0, Length: 100}})
		count(b.add(t.Context(), entry{rel: "f", node: tree.Node{Type: tree.TypeFile, Content: []id.ID{blob}}}))
		files++
		if b.held > b.window || b.lru.Len() != len(b.groups) {
			t.Fatalf("%d files held in %d groups (%d listed) after %d packs", b.held, len(b.groups), b.lru.Len(), i+1)
		}
	}
	if sent != 10 {
		t.Errorf("%d files sent before the flush, want the 10 oldest", sent)
	}
	count(b.flush())
	if sent != files || b.held != 0 || len(b.groups) != 0 {
		t.Errorf("%d files sent of %d, %d still held", sent, files, b.held)
	}
}
