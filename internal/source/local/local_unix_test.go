//go:build unix

package local

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/cloudstic/cloudstic/internal/source"
)

// TestOpenFIFO: opening a FIFO (a file replaced after it was listed)
// returns at once instead of waiting for a writer, and Stat tells.
func TestOpenFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := New().Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close() //nolint:errcheck // test cleanup
	fi, err := f.Stat()
	if err != nil || fi.Mode().IsRegular() {
		t.Fatalf("Stat = %v, %v; want a FIFO", fi, err)
	}
}

// TestXattrs: attributes come back sorted by name, values whole (also
// past the first buffer's size); none is nil.
func TestXattrs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	xs, err := New().Xattrs(context.Background(), path)
	if err != nil || xs != nil {
		t.Fatalf("Xattrs of a bare file = %v, %v; want none", xs, err)
	}
	big := make([]byte, 3*xattrBufSize)
	for i := range big {
		big[i] = byte(i)
	}
	for _, x := range []source.Xattr{{Name: "user.b", Value: big}, {Name: "user.a", Value: []byte("v")}} {
		if err := unix.Lsetxattr(path, x.Name, x.Value, 0); err != nil {
			if isNotSupported(err) {
				t.Skipf("no xattrs here: %v", err)
			}
			t.Fatal(err)
		}
	}
	xs, err = New().Xattrs(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if len(xs) != 2 || xs[0].Name != "user.a" || string(xs[0].Value) != "v" || xs[1].Name != "user.b" || string(xs[1].Value) != string(big) {
		t.Errorf("Xattrs = %v", xs)
	}
}
