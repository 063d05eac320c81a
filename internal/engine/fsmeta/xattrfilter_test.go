//go:build linux

package fsmeta

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo/tree"
	"github.com/cloudstic/cloudstic/internal/source/local"
)

// TestCaptureXattrFilter: SkipXattrs and XattrNamespaces apply to
// attributes read from disk and to those taken from a previous capture.
func TestCaptureXattrFilter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	setUserXattr(t, path, "user.a", []byte("1"))
	setUserXattr(t, path, "user.b", []byte("2"))
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	full, err := NewCapturer(local.New()).Node(context.Background(), path, fi)
	if err != nil {
		t.Fatal(err)
	}
	names := func(xs []tree.Xattr) []string {
		var out []string
		for _, x := range xs {
			out = append(out, x.Name)
		}
		return out
	}
	tests := []struct {
		name string
		c    *Capturer
		want []string
	}{
		{"all", NewCapturer(local.New()), []string{"user.a", "user.b"}},
		{"skip", &Capturer{src: local.New(), names: newIDNames(), SkipXattrs: true}, nil},
		{"namespace", &Capturer{src: local.New(), names: newIDNames(), XattrNamespaces: []string{"user.a", "trusted."}}, []string{"user.a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, prev := range []*tree.Node{nil, &full} {
				n, err := tt.c.NodeSince(context.Background(), path, fi, prev)
				if err != nil {
					t.Fatal(err)
				}
				if got := names(n.Xattrs); !slices.Equal(got, tt.want) {
					t.Errorf("prev %v: xattrs %q, want %q", prev != nil, got, tt.want)
				}
			}
		})
	}
}
