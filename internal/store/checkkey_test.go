package store_test

import (
	"errors"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/store"
)

// FuzzCheckKey checks arbitrary keys. A refused key is ErrInvalidKey; an
// accepted one is what CheckKey's doc promises, a clean relative
// slash-separated path whose elements do not start with "." (so no ".."),
// without NUL or backslash; and joined to a directory it names a file
// below that directory (a local store's layout).
func FuzzCheckKey(f *testing.F) {
	for _, k := range []string{"config", "keys/0123abcd", "data/ab/abcdef", "index/x", "", "/abs", "trailing/", "a//b",
		"../up", "a/../b", ".hidden", "a/.tmp", "a\\b", "a\x00b", "./a", "a/./b", "snapshots/.."} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		err := store.CheckKey(key)
		if err != nil {
			if !errors.Is(err, store.ErrInvalidKey) {
				t.Fatalf("error %v does not wrap ErrInvalidKey", err)
			}
			return
		}
		if key == "" || path.Clean(key) != key || path.IsAbs(key) || strings.ContainsAny(key, "\x00\\") {
			t.Fatalf("%q accepted: not a clean relative path", key)
		}
		for _, elem := range strings.Split(key, "/") {
			if elem == "" || strings.HasPrefix(elem, ".") {
				t.Fatalf("%q accepted: element %q", key, elem)
			}
		}
		const root = "/srv/store"
		if p := filepath.Join(root, filepath.FromSlash(key)); !strings.HasPrefix(p, root+string(filepath.Separator)) {
			t.Fatalf("%q accepted: it names %s, outside %s", key, p, root)
		}
	})
}
