//go:build !windows

package mount_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cloudstic/cloudstic/internal/engine/mount"
	"github.com/cloudstic/cloudstic/internal/engine/treewalk"
	"github.com/cloudstic/cloudstic/internal/engine/treewalk/walktest"
	"github.com/cloudstic/cloudstic/internal/repo/id"
)

func randomBytes(seed uint64, n int) []byte {
	b := make([]byte, n)
	var key [32]byte
	key[0], key[1] = byte(seed), byte(seed>>8)
	_, _ = rand.NewChaCha8(key).Read(b) // ChaCha8.Read never fails
	return b
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// serve mounts r at a new directory and returns it; the mount ends with
// the test, and the test fails if Serve does not return cleanly.
func serve(t *testing.T, r *walktest.Repo, opts mount.Options) string {
	t.Helper()
	if err := mount.CheckDevice(mount.DevFuse); err != nil {
		t.Fatalf("the mount tests need FUSE (scripts/test.sh creates /dev/fuse when it is missing): %v", err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mount.Serve(ctx, r.Repository, dir, opts) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Serve returned %v, want context.Canceled", err)
		}
		if mounted(t, dir) {
			t.Errorf("%s is still mounted", dir)
		}
	})
	deadline := time.Now().Add(time.Minute)
	for !mounted(t, dir) {
		select {
		case err := <-done:
			t.Fatalf("Serve ended before mounting: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("not mounted after a minute")
		}
	}
	return dir
}

// mounted reports whether dir is a mount point (its device differs from
// its parent's).
func mounted(t *testing.T, dir string) bool {
	t.Helper()
	var st, parent unix.Stat_t
	if unix.Stat(dir, &st) != nil || unix.Stat(filepath.Dir(dir), &parent) != nil {
		return false
	}
	return st.Dev != parent.Dev
}

// TestReadOnlyTheFilesPacks mounts a snapshot of many files spread over
// several data packs and checks that reading one file reads only the
// packs holding its blobs, and that the bytes are right: whole, from the
// middle of a many-blob file, and after the blob cache has evicted.
func TestReadOnlyTheFilesPacks(t *testing.T) {
	r := walktest.New(t)
	src := t.TempDir()
	files := map[string][]byte{}
	for i := range 400 {
		name := fmt.Sprintf("d%02d/f%03d", i%20, i)
		files[name] = randomBytes(uint64(i), 64<<10)
	}
	files["big"] = randomBytes(9999, 9<<20)
	files["big2"] = randomBytes(8888, 9<<20) // read at random offsets only
	for name, data := range files {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(src, name)), 0o755))
		must(t, os.WriteFile(filepath.Join(src, name), data, 0o644))
	}
	snap := r.Backup(t, src, "h", time.Now())
	dataPacks := walktest.DataPacks(t, r.Repository)
	if len(dataPacks) < 2 {
		t.Fatalf("%d data packs: the test needs several", len(dataPacks))
	}
	dir := serve(t, r, mount.Options{CacheBytes: 2 << 20})
	root := filepath.Join(dir, "snapshots", "latest")

	packsOf := func(name string) map[id.ID]bool {
		n, err := treewalk.Lookup(context.Background(), r.Repository, snap.Tree, name)
		must(t, err)
		out := map[id.ID]bool{}
		for _, b := range n.Content {
			loc, ok := r.Index().Lookup(t.Context(), b)
			if !ok {
				t.Fatalf("blob of %s not in the index", name)
			}
			out[loc.Pack] = true
		}
		return out
	}
	checkReads := func(t *testing.T, name string, want map[id.ID]bool) {
		t.Helper()
		got := map[id.ID]bool{}
		for p := range r.Rec.PackReads() {
			if dataPacks[p] {
				got[p] = true
			}
		}
		if len(got) != len(want) {
			t.Errorf("reading %s read %d data packs, want the %d holding its blobs", name, len(got), len(want))
		}
		for p := range got {
			if !want[p] {
				t.Errorf("reading %s read data pack %s, which holds none of its blobs", name, p.Short())
			}
		}
	}
	for _, name := range []string{"d07/f107", "d13/f393", "big"} {
		t.Run("cat "+name, func(t *testing.T) {
			_, err := os.Stat(filepath.Join(root, name)) // lookups read trees only
			must(t, err)
			r.Rec.Reset()
			got, err := os.ReadFile(filepath.Join(root, name))
			must(t, err)
			if !bytes.Equal(got, files[name]) {
				t.Fatalf("%s: read %d bytes, not the file's %d", name, len(got), len(files[name]))
			}
			checkReads(t, name, packsOf(name))
		})
	}
	t.Run("random reads of a file never read before", func(t *testing.T) {
		f, err := os.Open(filepath.Join(root, "big2"))
		must(t, err)
		defer f.Close() //nolint:errcheck // read-only
		for _, off := range []int64{7 << 20, 1 << 20, 9<<20 - 10, 3<<20 + 12345, 0} {
			buf := make([]byte, 100000)
			n, err := f.ReadAt(buf, off)
			if err != nil && !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			if want := files["big2"][off:min(off+100000, int64(len(files["big2"])))]; !bytes.Equal(buf[:n], want) {
				t.Errorf("ReadAt %d: %d bytes differ from the file's", off, n)
			}
		}
	})
}

// TestMiddleReadFetchesOnlyItsPack reads a few bytes in the middle of a
// file of many blobs spread over several packs: the index's plain sizes
// place the offset, so only the pack of the blob holding it is read, once
// (no blob before it is fetched to learn where it starts).
func TestMiddleReadFetchesOnlyItsPack(t *testing.T) {
	r := walktest.New(t)
	src := t.TempDir()
	data := randomBytes(7777, 40<<20)
	must(t, os.WriteFile(filepath.Join(src, "big"), data, 0o644))
	snap := r.Backup(t, src, "h", time.Now())
	n, err := treewalk.Lookup(context.Background(), r.Repository, snap.Tree, "big")
	must(t, err)
	// Where each blob starts, from the blobs themselves.
	var start int64
	off := int64(len(data)) * 3 / 4
	var want id.ID
	packs := map[id.ID]bool{}
	for _, b := range n.Content {
		blob, err := r.LoadBlob(context.Background(), b)
		must(t, err)
		loc, _ := r.Index().Lookup(t.Context(), b)
		packs[loc.Pack] = true
		if start <= off && off < start+int64(len(blob)) {
			want = loc.Pack
		}
		start += int64(len(blob))
	}
	if len(n.Content) < 10 || len(packs) < 2 {
		t.Fatalf("%d blobs in %d packs: the test needs many blobs in several packs", len(n.Content), len(packs))
	}
	dir := serve(t, r, mount.Options{})
	name := filepath.Join(dir, "snapshots", "latest", "big")
	_, err = os.Stat(name) // lookups read trees only
	must(t, err)
	r.Rec.Reset()
	f, err := os.Open(name)
	must(t, err)
	defer f.Close() //nolint:errcheck // read-only
	buf := make([]byte, 4096)
	_, err = f.ReadAt(buf, off)
	must(t, err)
	if !bytes.Equal(buf, data[off:off+4096]) {
		t.Fatal("the bytes read differ from the file's")
	}
	reads := r.Rec.PackReads()
	if len(reads) != 1 || reads[want] != 1 {
		t.Errorf("a read at offset %d read packs %v, want one read of %s only", off, reads, want.Short())
	}
}
