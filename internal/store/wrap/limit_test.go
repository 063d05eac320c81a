package wrap_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
	"github.com/cloudstic/cloudstic/internal/store/wrap"
)

func TestLimit(t *testing.T) {
	rows := []struct {
		name      string
		caps      store.Capabilities
		absentErr error
		casErr    error
	}{
		{"both", store.Capabilities{CreateIfAbsent: true, CompareAndSwap: true}, nil, nil},
		{"create-only", store.Capabilities{CreateIfAbsent: true}, nil, store.ErrUnsupported},
		{"none", store.Capabilities{}, store.ErrUnsupported, store.ErrUnsupported},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			ctx := context.Background()
			st := wrap.Limit(local.New(t.TempDir()), row.caps)
			if st.Capabilities() != row.caps {
				t.Fatalf("declares %+v, want %+v", st.Capabilities(), row.caps)
			}
			info, err := st.Put(ctx, "a", []byte("1"), store.PutOptions{IfAbsent: true})
			if !errors.Is(err, row.absentErr) || (row.absentErr == nil && err != nil) {
				t.Fatalf("create-if-absent: %v, want %v", err, row.absentErr)
			}
			if row.absentErr != nil {
				if info, err = st.Put(ctx, "a", []byte("1"), store.PutOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			_, err = st.Put(ctx, "a", []byte("2"), store.PutOptions{IfVersion: info.Version})
			if !errors.Is(err, row.casErr) || (row.casErr == nil && err != nil) {
				t.Fatalf("compare-and-swap: %v, want %v", err, row.casErr)
			}
		})
	}
}
