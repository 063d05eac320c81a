package storetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/store"
)

// NewStore returns a fresh, empty store for one subtest. The suite closes it.
type NewStore func(t *testing.T) store.Store

// Run runs the whole conformance suite.
func Run(t *testing.T, newStore NewStore) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"PutGet", testPutGet},
		{"Overwrite", testOverwrite},
		{"Missing", testMissing},
		{"Bound", testGetBound},
		{"GetRange", testGetRange},
		{"ReadRange", testReadRange},
		{"OpenRange", testOpenRange},
		{"Delete", testDelete},
		{"DeleteAbsentOK", testDeleteAbsentOK},
		{"Stat", testStat},
		{"List", testList},
		{"InvalidKeys", testInvalidKeys},
		{"CreateIfAbsent", testCreateIfAbsent},
		{"CreateIfAbsentRace", testCreateIfAbsentRace},
		{"CompareAndSwap", testCompareAndSwap},
		{"CompareAndSwapRace", testCompareAndSwapRace},
		{"Unsupported", testUnsupported},
		{"Cancelled", testCancelled},
		{"ConcurrentWriters", testConcurrentWriters},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			tc.fn(t, s)
		})
	}
}

// testBound is the read bound the suite's Gets pass: more than any object
// it writes (testBound checks the bound itself).
const testBound = 64 << 20

func randBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func mustPut(t *testing.T, s store.Store, key string, data []byte) store.ObjectInfo {
	t.Helper()
	info, err := s.Put(context.Background(), key, data, store.PutOptions{})
	if err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
	return info
}

func mustGet(t *testing.T, s store.Store, key string) []byte {
	t.Helper()
	data, err := s.Get(context.Background(), key, testBound)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	return data
}

func testPutGet(t *testing.T, s store.Store) {
	cases := []struct {
		name string
		key  string
		size int
	}{
		{"empty", "a/empty", 0},
		{"small", "a/small", 100},
		{"nested", "data/ab/abcdef0123", 4096},
		{"large", "data/cd/large", 9<<20 + 17},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := randBytes(t, c.size)
			info := mustPut(t, s, c.key, want)
			if info.Size != int64(c.size) {
				t.Errorf("Put info.Size = %d, want %d", info.Size, c.size)
			}
			if got := mustGet(t, s, c.key); !bytes.Equal(got, want) {
				t.Fatalf("Get returned %d bytes, differing from the %d put", len(got), len(want))
			}
		})
	}
}

func testOverwrite(t *testing.T, s store.Store) {
	first := mustPut(t, s, "k/obj", []byte("first"))
	second := mustPut(t, s, "k/obj", []byte("second, longer"))
	if got := mustGet(t, s, "k/obj"); string(got) != "second, longer" {
		t.Fatalf("after overwrite Get = %q", got)
	}
	if first.Version != "" && first.Version == second.Version {
		t.Errorf("two writes share version %q", first.Version)
	}
}

func testMissing(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustPut(t, s, "dir/present", []byte("x"))
	checks := []struct {
		name string
		err  func() error
	}{
		{"Get", func() error { _, err := s.Get(ctx, "dir/absent", testBound); return err }},
		{"GetRange", func() error { _, err := s.GetRange(ctx, "dir/absent", 0, 1); return err }},
		{"Stat", func() error { _, err := s.Stat(ctx, "dir/absent"); return err }},
		{"Delete", func() error { return s.Delete(ctx, "dir/absent") }},
		{"GetNoDir", func() error { _, err := s.Get(ctx, "nodir/absent", testBound); return err }},
		{"GetDirAsKey", func() error { _, err := s.Get(ctx, "dir", testBound); return err }},
		{"StatDirAsKey", func() error { _, err := s.Stat(ctx, "dir"); return err }},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if err := c.err(); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("got %v, want ErrNotFound", err)
			}
		})
	}
}

// testGetBound checks Get's bound: an object of exactly max bytes is read,
// one byte more is store.ErrTooLarge, whatever the object's size.
func testGetBound(t *testing.T, s store.Store) {
	ctx := context.Background()
	for _, size := range []int64{0, 1, 1000, 1<<20 + 3} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			key := fmt.Sprintf("bound/%d", size)
			want := randBytes(t, int(size))
			mustPut(t, s, key, want)
			got, err := s.Get(ctx, key, size)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("Get with the object's own size as bound: %d bytes, %v", len(got), err)
			}
			if size == 0 {
				return
			}
			for _, max := range []int64{size - 1, 0} {
				got, err = s.Get(ctx, key, max)
				if !errors.Is(err, store.ErrTooLarge) || got != nil {
					t.Fatalf("Get(max %d) of %d bytes = %d bytes, %v; want store.ErrTooLarge", max, size, len(got), err)
				}
			}
		})
	}
	if _, err := s.Get(ctx, "bound/absent", 10); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get of a missing key with a bound: %v, want ErrNotFound", err)
	}
}

// rangeCases are the ranges read from a 1 MiB object by testGetRange and
// testReadRange: within it, up to its end, and past it (an error).
var rangeCases = []struct {
	off, n int64
	ok     bool
}{
	{0, 10, true}, {1000, 5000, true}, {1<<20 - 1, 1, true}, {0, 1 << 20, true},
	{1<<20 - 5, 10, false}, {2 << 20, 1, false},
}

func testGetRange(t *testing.T, s store.Store) {
	data := randBytes(t, 1<<20)
	mustPut(t, s, "r/obj", data)
	ctx := context.Background()
	cases := rangeCases
	for _, c := range cases {
		t.Run(fmt.Sprintf("%d+%d", c.off, c.n), func(t *testing.T) {
			got, err := s.GetRange(ctx, "r/obj", c.off, c.n)
			if !c.ok {
				if err == nil {
					t.Fatalf("read past end returned %d bytes and no error", len(got))
				}
				if errors.Is(err, store.ErrNotFound) {
					t.Fatalf("read past end of an existing object said not found: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, data[c.off:c.off+c.n]) {
				t.Fatal("wrong bytes")
			}
		})
	}
}

// testReadRange checks store.ReadRangeInto (ReadRange when the store is a
// store.RangeReader, GetRange and a copy otherwise) into a reused buffer
// that holds other bytes before each read.
func testReadRange(t *testing.T, s store.Store) {
	data := randBytes(t, 1<<20)
	mustPut(t, s, "r/obj", data)
	ctx := context.Background()
	cases := rangeCases
	buf := make([]byte, 1<<20)
	for _, c := range cases {
		t.Run(fmt.Sprintf("%d+%d", c.off, c.n), func(t *testing.T) {
			for i := range buf {
				buf[i] = 0xa5
			}
			err := store.ReadRangeInto(ctx, s, "r/obj", c.off, buf[:c.n])
			if !c.ok {
				if err == nil {
					t.Fatal("read past end returned no error")
				}
				if errors.Is(err, store.ErrNotFound) {
					t.Fatalf("read past end of an existing object said not found: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf[:c.n], data[c.off:c.off+c.n]) {
				t.Fatal("wrong bytes")
			}
		})
	}
	if err := store.ReadRangeInto(ctx, s, "r/absent", 0, buf[:1]); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("missing key: got %v, want ErrNotFound", err)
	}
	got, err := store.ReadRangeBuffer(ctx, s, "r/obj", 7, 100, buf[:0])
	if err != nil || !bytes.Equal(got, data[7:107]) {
		t.Fatalf("ReadRangeBuffer: %v, right bytes: %v", err, bytes.Equal(got, data[7:107]))
	}
}

func testDelete(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustPut(t, s, "d/one", []byte("1"))
	mustPut(t, s, "d/two", []byte("2"))
	if err := s.Delete(ctx, "d/one"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "d/one", testBound); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get after Delete: %v", err)
	}
	if err := s.Delete(ctx, "d/one"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second Delete: %v, want ErrNotFound", err)
	}
	if got := mustGet(t, s, "d/two"); string(got) != "2" {
		t.Fatal("sibling damaged by Delete")
	}
}

// testDeleteAbsentOK: store.DeleteAbsentOK (DeleteIfPresent where the
// store has it) deletes an existing key, and a missing one is no error.
func testDeleteAbsentOK(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustPut(t, s, "d/one", []byte("1"))
	mustPut(t, s, "d/two", []byte("2"))
	for i := range 2 { // the second time the key is missing
		if err := store.DeleteAbsentOK(ctx, s, "d/one"); err != nil {
			t.Fatalf("DeleteAbsentOK #%d: %v", i+1, err)
		}
		if _, err := s.Get(ctx, "d/one", testBound); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("Get after DeleteAbsentOK #%d: %v", i+1, err)
		}
	}
	if got := mustGet(t, s, "d/two"); string(got) != "2" {
		t.Fatal("sibling damaged by DeleteAbsentOK")
	}
	if err := store.DeleteAbsentOK(ctx, s, "../escape"); !errors.Is(err, store.ErrInvalidKey) {
		t.Fatalf("DeleteAbsentOK of an invalid key: %v, want ErrInvalidKey", err)
	}
}

func testStat(t *testing.T, s store.Store) {
	before := time.Now()
	info := mustPut(t, s, "s/obj", []byte("hello"))
	st, err := s.Stat(context.Background(), "s/obj")
	if err != nil {
		t.Fatal(err)
	}
	if st.Size != 5 || st.Key != "s/obj" {
		t.Fatalf("Stat = %+v", st)
	}
	if info.Version != "" && st.Version != info.Version {
		t.Errorf("Stat version %q != Put version %q", st.Version, info.Version)
	}
	if st.ModTime.IsZero() {
		t.Error("Stat returned no ModTime")
	} else if d := st.ModTime.Sub(before); d < -2*time.Minute || d > 2*time.Minute {
		t.Errorf("ModTime %v is %v away from now", st.ModTime, d)
	}
}

func listKeys(t *testing.T, s store.Store, prefix string) []string {
	t.Helper()
	var keys []string
	err := s.List(context.Background(), prefix, func(oi store.ObjectInfo) error {
		keys = append(keys, oi.Key)
		return nil
	})
	if err != nil {
		t.Fatalf("List(%q): %v", prefix, err)
	}
	sort.Strings(keys)
	return keys
}

func testList(t *testing.T, s store.Store) {
	for _, k := range []string{"index/lock.exclusive", "index/lock.shared/a1", "index/lock.shared/b2",
		"index/packs/p1", "data/00/x", "data/01/y", "snapshots/s1", "config"} {
		mustPut(t, s, k, []byte(k))
	}
	cases := []struct {
		prefix string
		want   []string
	}{
		{"index/lock.shared/", []string{"index/lock.shared/a1", "index/lock.shared/b2"}},
		{"index/lock.", []string{"index/lock.exclusive", "index/lock.shared/a1", "index/lock.shared/b2"}},
		{"data/", []string{"data/00/x", "data/01/y"}},
		{"data/0", []string{"data/00/x", "data/01/y"}},
		{"snapshots/", []string{"snapshots/s1"}},
		{"nothing/", nil},
		{"config", []string{"config"}},
		{"", []string{"config", "data/00/x", "data/01/y", "index/lock.exclusive", "index/lock.shared/a1",
			"index/lock.shared/b2", "index/packs/p1", "snapshots/s1"}},
	}
	for _, c := range cases {
		t.Run(c.prefix, func(t *testing.T) {
			got := listKeys(t, s, c.prefix)
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Fatalf("List(%q) = %v, want %v", c.prefix, got, c.want)
			}
		})
	}
	t.Run("sizes", func(t *testing.T) {
		err := s.List(context.Background(), "data/", func(oi store.ObjectInfo) error {
			if oi.Size != int64(len(oi.Key)) {
				return fmt.Errorf("%s: size %d, want %d", oi.Key, oi.Size, len(oi.Key))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	t.Run("stop", func(t *testing.T) {
		stop := errors.New("stop")
		n := 0
		err := s.List(context.Background(), "", func(store.ObjectInfo) error { n++; return stop })
		if !errors.Is(err, stop) || n != 1 {
			t.Fatalf("List returned %v after %d calls, want the callback's error after 1", err, n)
		}
	})
}

func testInvalidKeys(t *testing.T, s store.Store) {
	for _, k := range []string{"", "/abs", "a/../b", "../up", "a//b", "a/", ".hidden", "a/.tmp-x", "a/./b"} {
		t.Run(fmt.Sprintf("%q", k), func(t *testing.T) {
			_, err := s.Put(context.Background(), k, []byte("x"), store.PutOptions{})
			if !errors.Is(err, store.ErrInvalidKey) {
				t.Fatalf("Put(%q) = %v, want ErrInvalidKey", k, err)
			}
		})
	}
}

func testCancelled(t *testing.T, s store.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Put(ctx, "x/cancelled", []byte("x"), store.PutOptions{}); err == nil {
		t.Error("Put with a cancelled context succeeded")
	}
	if _, err := s.Get(ctx, "x/cancelled", testBound); errors.Is(err, store.ErrNotFound) || err == nil {
		t.Errorf("Get with a cancelled context = %v, want a context error", err)
	}
}

// testConcurrentWriters checks that readers racing writers of one key only
// ever see complete objects.
func testConcurrentWriters(t *testing.T, s store.Store) {
	payloads := [][]byte{bytes.Repeat([]byte("a"), 256<<10), bytes.Repeat([]byte("b"), 300<<10)}
	mustPut(t, s, "cw/key", payloads[0])
	ctx := context.Background()
	errs := race(8, func(i int) error {
		for j := 0; j < 5; j++ {
			if i%2 == 0 {
				if _, err := s.Put(ctx, "cw/key", payloads[(i/2+j)%2], store.PutOptions{}); err != nil {
					return err
				}
				continue
			}
			got, err := s.Get(ctx, "cw/key", testBound)
			if err != nil {
				return err
			}
			if !bytes.Equal(got, payloads[0]) && !bytes.Equal(got, payloads[1]) {
				return fmt.Errorf("read a torn object of %d bytes", len(got))
			}
		}
		return nil
	})
	for i, err := range errs {
		if err != nil {
			t.Errorf("worker %d: %v", i, err)
		}
	}
}
