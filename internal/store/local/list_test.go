package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/test/winetest"
)

func listAll(s *Store, prefix string) ([]string, error) {
	var keys []string
	err := s.List(context.Background(), prefix, func(oi store.ObjectInfo) error {
		keys = append(keys, oi.Key)
		return nil
	})
	sort.Strings(keys)
	return keys, err
}

// TestListDirectories replaces a directory of keys by a symbolic link or a
// file, as an attacker with write access to the store would (or a user
// moving a directory to another disk): listing it, or a prefix holding it,
// is store.ErrNotDirectory naming it, never an empty listing.
func TestListDirectories(t *testing.T) {
	cases := []struct {
		name     string
		replaced string // slash-separated, below the root
		how      func(t *testing.T, p string)
		prefixes []string
	}{
		{"snapshots is a link to an empty directory", "snapshots", linkToEmptyDir, []string{"snapshots/", "snapshots/ab", ""}},
		{"snapshots is a file", "snapshots", makeFile, []string{"snapshots/", "snapshots/ab"}},
		{"index is a link", "index", linkToEmptyDir, []string{"index/packs/", "index/lock.shared/", "index/lock."}},
		{"data/ab is a link", "data/ab", linkToEmptyDir, []string{"data/", "data/ab/", "data/a"}},
		{"data/ab is a file", "data/ab", makeFile, []string{"data/ab/"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := New(dir)
			for _, k := range []string{"snapshots/s1", "index/packs/i1", "index/lock.shared/l1", "data/ab/p1", "data/cd/p2", "config"} {
				if _, err := s.Put(context.Background(), k, []byte(k), store.PutOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			p := filepath.Join(dir, filepath.FromSlash(tc.replaced))
			if err := os.RemoveAll(p); err != nil {
				t.Fatal(err)
			}
			tc.how(t, p)
			for _, prefix := range tc.prefixes {
				keys, err := listAll(s, prefix)
				if !errors.Is(err, store.ErrNotDirectory) || !strings.Contains(err.Error(), p) {
					t.Errorf("List(%q) = %v, %v; want store.ErrNotDirectory naming %s", prefix, keys, err, p)
				}
			}
			// Other directories still list.
			if keys, err := listAll(s, "data/cd/"); err != nil || fmt.Sprint(keys) != "[data/cd/p2]" {
				t.Errorf("List(data/cd/) = %v, %v", keys, err)
			}
		})
	}
}

func linkToEmptyDir(t *testing.T, p string) {
	t.Helper()
	winetest.SkipWithoutSymlinks(t)
	if err := os.Symlink(t.TempDir(), p); err != nil {
		t.Fatal(err)
	}
}

func makeFile(t *testing.T, p string) {
	t.Helper()
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestListSpecialEntries: a symbolic link to a file among the objects is
// listed (so a caller sees it, and can delete it), and reading it is
// store.ErrNotRegular.
func TestListSpecialEntries(t *testing.T) {
	winetest.SkipWithoutSymlinks(t)
	dir := t.TempDir()
	s := New(dir)
	ctx := context.Background()
	if _, err := s.Put(ctx, "index/lock.shared/ok", []byte("x"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "index", "lock.shared", "zero")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	keys, err := listAll(s, "index/lock.shared/")
	if err != nil || fmt.Sprint(keys) != "[index/lock.shared/ok index/lock.shared/zero]" {
		t.Fatalf("List = %v, %v", keys, err)
	}
	if _, err := s.Get(ctx, "index/lock.shared/zero", 1<<20); !errors.Is(err, store.ErrNotRegular) {
		t.Fatalf("Get of the link: %v, want store.ErrNotRegular", err)
	}
	if err := s.Delete(ctx, "index/lock.shared/zero"); err != nil {
		t.Fatal(err)
	}
	if keys, err = listAll(s, "index/lock.shared/"); err != nil || fmt.Sprint(keys) != "[index/lock.shared/ok]" {
		t.Fatalf("List after Delete = %v, %v", keys, err)
	}
}

// TestSymlinkedRoot: the store's root may be a symbolic link (a user's
// /backup pointing at a mounted disk): everything works through it.
func TestSymlinkedRoot(t *testing.T) {
	winetest.SkipWithoutSymlinks(t)
	real := t.TempDir()
	root := filepath.Join(t.TempDir(), "backup")
	if err := os.Symlink(real, root); err != nil {
		t.Fatal(err)
	}
	s := New(root)
	ctx := context.Background()
	for _, k := range []string{"config", "snapshots/s1", "data/ab/p1"} {
		if _, err := s.Put(ctx, k, []byte(k), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for prefix, want := range map[string]string{
		"":           "[config data/ab/p1 snapshots/s1]",
		"snapshots/": "[snapshots/s1]",
		"con":        "[config]",
	} {
		if keys, err := listAll(s, prefix); err != nil || fmt.Sprint(keys) != want {
			t.Errorf("List(%q) = %v, %v; want %s", prefix, keys, err, want)
		}
	}
	if got, err := s.Get(ctx, "config", 100); err != nil || string(got) != "config" {
		t.Errorf("Get = %q, %v", got, err)
	}
	old := time.Now().Add(-48 * time.Hour)
	tmp := filepath.Join(real, "data", "ab", ".tmp-0123456789abcdef")
	if err := os.WriteFile(tmp, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tmp, old, old); err != nil {
		t.Fatal(err)
	}
	if n, err := s.RemoveStaleTemp(ctx, time.Now().Add(-time.Hour)); err != nil || n != 1 {
		t.Errorf("RemoveStaleTemp through a linked root = %d, %v; want 1", n, err)
	}
}
