package cache

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func obj(prefix string, data []byte) string {
	sum := sha256.Sum256(data)
	return prefix + hex.EncodeToString(sum[:])
}

func open(t *testing.T, max int64) *Cache {
	t.Helper()
	c, err := Open(Options{Dir: t.TempDir(), MaxBytes: max}, "0123abcd")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestPutGet(t *testing.T) {
	c := open(t, 1<<20)
	data := []byte("sealed index file")
	key := obj("index/packs/", data)
	if _, err := c.Get(key); !errors.Is(err, ErrMiss) {
		t.Fatalf("empty cache: got %v, want ErrMiss", err)
	}
	if err := c.Put(key, data); err != nil {
		t.Fatal(err)
	}
	got, err := c.Get(key)
	if err != nil || string(got) != string(data) {
		t.Fatalf("Get = %q, %v", got, err)
	}
	part, err := c.ReadRange(key, 7, 5)
	if err != nil || string(part) != "index" {
		t.Fatalf("ReadRange = %q, %v", part, err)
	}
	if _, err := c.ReadRange(key, 10, 100); !errors.Is(err, ErrMiss) {
		t.Fatalf("ReadRange past the end: %v, want ErrMiss (and the copy dropped)", err)
	}
	if _, err := c.Get(key); !errors.Is(err, ErrMiss) {
		t.Fatalf("after a short read the copy must be gone: %v", err)
	}
}

func TestPutRejects(t *testing.T) {
	c := open(t, 1<<20)
	data := []byte("x")
	tests := []struct {
		name string
		key  string
		want error
	}{
		{"wrong hash", obj("snapshots/", []byte("y")), ErrMismatch},
		{"not a hash", "snapshots/abc", nil},
		{"escape", "../" + obj("", data), nil},
		{"absolute", "/" + obj("", data), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := c.Put(tc.key, data)
			if err == nil {
				t.Fatal("Put accepted it")
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
}

func TestDamagedCopyIsDropped(t *testing.T) {
	c := open(t, 1<<20)
	data := []byte("snapshot json")
	key := obj("snapshots/", data)
	if err := c.Put(key, data); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.Dir(), filepath.FromSlash(key)), []byte("tampered"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(key); !errors.Is(err, ErrMiss) {
		t.Fatalf("damaged copy: got %v, want ErrMiss", err)
	}
	if _, err := os.Stat(filepath.Join(c.Dir(), filepath.FromSlash(key))); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("damaged copy still there: %v", err)
	}
}

func TestEvictionBoundsSize(t *testing.T) {
	const max = 64 << 10
	c := open(t, max)
	for i := 0; i < 40; i++ {
		data := make([]byte, 8<<10)
		data[0], data[1] = byte(i), byte(i>>8)
		if err := c.Put(obj("data/ab/", data), data); err != nil {
			t.Fatal(err)
		}
	}
	files, err := c.files()
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, f := range files {
		total += f.size
	}
	if total > max {
		t.Fatalf("cache holds %d bytes, bound %d", total, max)
	}
	big := make([]byte, max/2)
	if err := c.Put(obj("data/cd/", big), big); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(obj("data/cd/", big)); !errors.Is(err, ErrMiss) {
		t.Fatalf("an object over a quarter of the bound must not be cached: %v", err)
	}
}

func TestRetain(t *testing.T) {
	c := open(t, 1<<20)
	a, b := []byte("a"), []byte("b")
	ka, kb := obj("snapshots/", a), obj("snapshots/", b)
	ki := obj("index/packs/", a)
	for _, p := range []struct {
		k string
		d []byte
	}{{ka, a}, {kb, b}, {ki, a}} {
		if err := c.Put(p.k, p.d); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Retain("snapshots/", func(k string) bool { return k == ka }); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key  string
		kept bool
	}{{ka, true}, {kb, false}, {ki, true}} {
		_, err := c.Get(tc.key)
		if (err == nil) != tc.kept {
			t.Errorf("%s: kept=%v, want %v (%v)", tc.key, err == nil, tc.kept, err)
		}
	}
}

func TestOpenAndEnv(t *testing.T) {
	for _, bad := range []string{"", "../x", "zz", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef00"} {
		if _, err := Open(Options{Dir: t.TempDir()}, bad); !errors.Is(err, ErrInvalidRepoID) {
			t.Errorf("Open(%q): %v, want ErrInvalidRepoID", bad, err)
		}
	}
	tests := []struct {
		name   string
		env    map[string]string
		ok     bool
		dir    string
		maxMiB int64
	}{
		{"xdg", map[string]string{"XDG_CACHE_HOME": "/x", "HOME": "/h"}, true, "/x/cloudstic", 0},
		{"home", map[string]string{"HOME": "/h"}, true, "/h/.cache/cloudstic", 0},
		{"override", map[string]string{EnvDir: "/c", "HOME": "/h", EnvMaxMB: "10"}, true, "/c", 10},
		{"disabled", map[string]string{EnvDisable: "1", "HOME": "/h"}, false, "", 0},
		{"zero is enabled", map[string]string{EnvDisable: "0", "HOME": "/h"}, true, "/h/.cache/cloudstic", 0},
		{"nowhere", map[string]string{}, false, "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, ok := FromEnv(func(k string) string { return tc.env[k] })
			if ok != tc.ok || o.Dir != tc.dir || o.MaxBytes != tc.maxMiB<<20 {
				t.Fatalf("FromEnv = %+v, %v", o, ok)
			}
		})
	}
}

// TestRetainLeavesOtherPrefixes: Retain of one prefix removes nothing
// under another prefix nor derived files, also when keep rejects all.
func TestRetainLeavesOtherPrefixes(t *testing.T) {
	c := open(t, 1<<20)
	a := []byte("a")
	ks, ki, kd := obj("snapshots/", a), obj("index/packs/", a), obj("data/ab/", a)
	for _, k := range []string{ks, ki, kd} {
		if err := c.Put(k, a); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.PutDerived("heads", []byte("h")); err != nil {
		t.Fatal(err)
	}
	if err := c.Retain("index/packs/", func(string) bool { return false }); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key  string
		kept bool
	}{{ks, true}, {ki, false}, {kd, true}} {
		if _, err := c.Get(tc.key); (err == nil) != tc.kept {
			t.Errorf("%s: kept=%v, want %v (%v)", tc.key, err == nil, tc.kept, err)
		}
	}
	if _, err := c.GetDerived("heads"); err != nil {
		t.Errorf("derived file after Retain: %v", err)
	}
	// A prefix nothing was cached under yet.
	if err := c.Retain("keys/", func(string) bool { return false }); err != nil {
		t.Errorf("Retain of an empty prefix: %v", err)
	}
}

func TestDerived(t *testing.T) {
	c := open(t, 1<<20)
	if _, err := c.GetDerived("snapshot-heads"); !errors.Is(err, ErrMiss) {
		t.Fatalf("missing derived file: %v, want ErrMiss", err)
	}
	for i, data := range []string{"first", "second, longer"} {
		if err := c.PutDerived("snapshot-heads", []byte(data)); err != nil {
			t.Fatal(err)
		}
		got, err := c.GetDerived("snapshot-heads")
		if err != nil || string(got) != data {
			t.Fatalf("write %d: got %q, %v, want %q", i, got, err, data)
		}
	}
	for _, bad := range []string{"", "../x", "a/b", "Heads", "x.y"} {
		if err := c.PutDerived(bad, []byte("x")); err == nil {
			t.Errorf("PutDerived(%q): no error", bad)
		}
		if _, err := c.GetDerived(bad); err == nil || errors.Is(err, ErrMiss) {
			t.Errorf("GetDerived(%q): %v, want an invalid-name error", bad, err)
		}
	}
}
