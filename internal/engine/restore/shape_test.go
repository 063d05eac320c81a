package restore

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// TestRestoreShape: a restore from a local store runs two workers a core,
// each with its own decoder, reading up to maxBatchSpan into buffers on
// huge pages; one from a store across a network runs at least
// remoteWorkers, with a decoder a core, streaming up to streamSpan into
// buffers on small pages.
func TestRestoreShape(t *testing.T) {
	cores := runtime.GOMAXPROCS(0)
	tests := []struct {
		name   string
		remote bool
		want   shape
	}{
		{"local", false, shape{workers: 2 * cores, decoders: 2 * cores, span: maxBatchSpan, hugePages: true}},
		{"remote", true, shape{workers: max(2*cores, remoteWorkers), decoders: cores, span: streamSpan, stream: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var st store.Store = local.New(t.TempDir())
			if tc.remote {
				st = remoteStore{st}
			}
			r, _, err := repo.Init(context.Background(), st, repo.InitOptions{NoEncryption: true})
			if err != nil {
				t.Fatal(err)
			}
			if got := restoreShape(r); got != tc.want {
				t.Fatalf("shape %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestDecoderPool: however many workers take and give back decoders at
// once, no more than the pool's bound are ever made or lent at a time, and
// every worker gets one.
func TestDecoderPool(t *testing.T) {
	r, _, err := repo.Init(context.Background(), local.New(t.TempDir()), repo.InitOptions{NoEncryption: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, bound := range []int{1, 2, 3} {
		t.Run("", func(t *testing.T) {
			p := newDecoderPool(r, bound, false)
			defer p.free()
			var lent, most atomic.Int32
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					for range 200 {
						dec := p.get()
						n := lent.Add(1)
						for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
						}
						runtime.Gosched()
						lent.Add(-1)
						p.put(dec)
					}
				})
			}
			wg.Wait()
			if got := most.Load(); got > int32(bound) || got < 1 {
				t.Errorf("%d decoders lent at once, bound %d", got, bound)
			}
			if p.made > bound {
				t.Errorf("%d decoders made, bound %d", p.made, bound)
			}
		})
	}
}
