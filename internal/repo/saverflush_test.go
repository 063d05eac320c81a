package repo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// errRefused is what flushStore answers to a request it was told to fail.
var errRefused = errors.New("refused by the test store")

// flushStore fails the data or the index PUTs on demand, and can hold each
// index PUT until a check beside it has started (gate closed), or until
// wait has passed, when it fails: a flush that sends its check only after
// the index PUT fails rather than hangs.
type flushStore struct {
	store.Store
	failData, failIndex bool
	gate                chan struct{} // nil: index PUTs are not held
	wait                time.Duration
	mu                  sync.Mutex
	log                 []string
}

func (s *flushStore) record(ev string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, ev)
}

func (s *flushStore) Put(ctx context.Context, key string, data []byte, opts store.PutOptions) (store.ObjectInfo, error) {
	switch {
	case strings.HasPrefix(key, DataPrefix) && s.failData:
		return store.ObjectInfo{}, fmt.Errorf("%s: %w", key, errRefused)
	case !strings.HasPrefix(key, IndexPrefix):
		return s.Store.Put(ctx, key, data, opts)
	case s.failIndex:
		s.record("index PUT")
		return store.ObjectInfo{}, fmt.Errorf("%s: %w", key, errRefused)
	}
	if s.gate != nil {
		ctx, cancel := context.WithTimeout(ctx, s.wait)
		defer cancel()
		select {
		case <-s.gate:
		case <-ctx.Done():
			return store.ObjectInfo{}, fmt.Errorf("index PUT held %v, and no check beside it started: %w", s.wait, ctx.Err())
		}
	}
	info, err := s.Store.Put(ctx, key, data, opts)
	s.record("index PUT")
	return info, err
}

// TestSaverFlushWith: FlushWith runs its check while the final index file
// is written (the index PUT is held until the check starts), only after
// every pack is stored, not at all when a pack could not be, and alone
// when there is nothing to index; the error is both of theirs.
func TestSaverFlushWith(t *testing.T) {
	t.Parallel()
	errCheck := errors.New("check failed")
	tests := []struct {
		name                string
		blobs               int
		failData, failIndex bool
		checkErr            error
		wantErr             []error // each must be in the error; none: nil
		wantChecks          int32
		wantFiles           int64
	}{
		{"beside the index write", 3, false, false, nil, nil, 1, 1},
		{"check fails, index written", 3, false, false, errCheck, []error{errCheck}, 1, 1},
		{"index write fails", 3, false, true, nil, []error{errRefused}, 1, 0},
		{"both fail", 3, false, true, errCheck, []error{errRefused, errCheck}, 1, 0},
		{"a pack fails: no check", 3, true, false, nil, []error{errRefused}, 0, 0},
		{"nothing to index: the check alone", 0, false, false, errCheck, []error{errCheck}, 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			st := local.New(t.TempDir())
			if _, _, err := Init(ctx, st, InitOptions{Credentials: Credentials{PlatformKey: testPlatformKey}}); err != nil {
				t.Fatal(err)
			}
			fs := &flushStore{Store: st, failData: tc.failData, failIndex: tc.failIndex,
				gate: make(chan struct{}), wait: 10 * time.Second}
			r, err := Open(ctx, fs, Credentials{PlatformKey: testPlatformKey})
			if err != nil {
				t.Fatal(err)
			}
			s := writerFor(t, r, st).NewSaver(ctx, 2, pack.Zstd)
			var saved [][]byte
			for i := range tc.blobs {
				data := fmt.Appendf(nil, "blob %d", i)
				if _, err := s.Save(ctx, pack.DataBlob, r.Key().ID(data), data); err != nil {
					t.Fatal(err)
				}
				saved = append(saved, data)
			}
			var checks atomic.Int32
			err = s.FlushWith(ctx, func(context.Context) error {
				checks.Add(1)
				fs.record("check")
				close(fs.gate)
				return tc.checkErr
			})
			for _, want := range tc.wantErr {
				if !errors.Is(err, want) {
					t.Errorf("FlushWith: %v, want %v in it", err, want)
				}
			}
			if len(tc.wantErr) == 0 && err != nil {
				t.Fatalf("FlushWith: %v", err)
			}
			if n := checks.Load(); n != tc.wantChecks {
				t.Errorf("%d checks, want %d (requests: %v)", n, tc.wantChecks, fs.log)
			}
			if n := s.Stats().IndexFiles; n != tc.wantFiles {
				t.Errorf("%d index files, want %d", n, tc.wantFiles)
			}
			if tc.wantFiles > 0 {
				for _, data := range saved {
					if !r.Index().Has(t.Context(), r.Key().ID(data)) {
						t.Errorf("blob %q not in the index after the flush", data)
					}
				}
			}
		})
	}
}
