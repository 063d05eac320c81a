package dump_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/dump"
	"github.com/cloudstic/cloudstic/internal/engine/treewalk"
	"github.com/cloudstic/cloudstic/internal/engine/treewalk/walktest"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// TestCrafted dumps the crafted snapshots as archives: the deep one and
// the one shared 2^40 ways fail before a byte is written (the dashboard
// can still answer with an error page); identical directories are dumped
// once per path.
func TestCrafted(t *testing.T) {
	r := walktest.New(t)
	h := r.WriteHostile(t)
	tests := []struct {
		name string
		snap snapshot.WithID
		path string
		want error
	}{
		{"deep", h.Deep, "/", tree.ErrTooDeep},
		{"deep from a subdirectory", h.Deep, "/d/d/d", tree.ErrTooDeep},
		{"shared", h.Shared, "/", tree.ErrTooManyEntries},
		{"twins", h.Twins, "/", nil},
	}
	for _, tc := range tests {
		for _, format := range []string{dump.FormatTar, dump.FormatZip} {
			t.Run(tc.name+" "+format, func(t *testing.T) {
				var buf bytes.Buffer
				err := dump.Archive(walktest.Guard(t), r.Repository, treewalk.Root(tc.snap.Tree, nil), tc.path, format, &buf)
				if !errors.Is(err, tc.want) {
					t.Fatalf("got %v, want %v", err, tc.want)
				}
				if err != nil && buf.Len() > 0 {
					t.Errorf("%d bytes written before the error", buf.Len())
				}
			})
		}
	}
}
