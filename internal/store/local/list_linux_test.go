package local

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/store"
)

// bytesRead returns the bytes this process has read through read(2) and
// its kin so far (/proc/self/io's rchar, page cache hits included).
func bytesRead(t *testing.T) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Fatalf("reading /proc/self/io: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "rchar: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("rchar %q: %v", v, err)
			}
			return n
		}
	}
	t.Fatalf("/proc/self/io has no rchar: %q", data)
	return 0
}

// TestListReadsNoObject lists prefixes of small objects (snapshots, small
// tree packs: what backup, check and prune list) and checks that the
// listing reads none of them. It used to read each object under 64 KiB to
// hash it into its version, so a listing of thousands of snapshots read
// them all, and a backup then read them again. List's version must still
// change with each write, and must never pass for Stat's in a
// compare-and-swap.
func TestListReadsNoObject(t *testing.T) {
	ctx := context.Background()
	s := New(t.TempDir())
	const objects, size = 64, 16 << 10
	for i := range objects {
		if _, err := s.Put(ctx, fmt.Sprintf("snapshots/%02d", i), bytes.Repeat([]byte{byte(i)}, size), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct{ name, prefix string }{
		{"one directory", "snapshots/"},
		{"the whole store", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := bytesRead(t)
			n := 0
			err := s.List(ctx, c.prefix, func(store.ObjectInfo) error { n++; return nil })
			read := bytesRead(t) - before
			if err != nil || n != objects {
				t.Fatalf("List(%q) = %d objects, %v; want %d", c.prefix, n, err, objects)
			}
			// Reading the directory and /proc/self/io itself costs a few
			// KiB; the objects would cost a MiB.
			if read >= size {
				t.Errorf("List(%q) read %d bytes, want less than one object (%d)", c.prefix, read, size)
			}
		})
	}

	t.Run("versions", func(t *testing.T) {
		listed := func() string {
			var v string
			err := s.List(ctx, "snapshots/00", func(oi store.ObjectInfo) error { v = oi.Version; return nil })
			if err != nil || v == "" {
				t.Fatalf("List = version %q, %v", v, err)
			}
			return v
		}
		first := listed()
		if _, err := s.Put(ctx, "snapshots/00", []byte("rewritten, another size"), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		second := listed()
		if first == second {
			t.Errorf("a rewrite kept the listed version %q", first)
		}
		_, err := s.Put(ctx, "snapshots/00", []byte("swap"), store.PutOptions{IfVersion: second})
		if !errors.Is(err, store.ErrVersionMismatch) {
			t.Errorf("a compare-and-swap on a listed (coarse) version = %v, want ErrVersionMismatch", err)
		}
	})
}
