package fsmeta

import (
	"errors"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

func TestValidName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"a", true},
		{"file.txt", true},
		{"...", true}, // restored as "..%2E" on Windows
		{".hidden", true},
		{"..x", true},
		{"\xff\xfe", true},
		{"a:b", true}, // restored as "a%3Ab" on Windows
		{`a\b`, true},
		{"CON", true},
		{"aux.txt", true},
		{"", false},
		{".", false},
		{"..", false},
		{"a/b", false},
		{"/", false},
		{"/abs", false},
		{"a\x00b", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidName(tt.name)
			if tt.ok && err != nil {
				t.Fatalf("ValidName(%q) = %v, want nil", tt.name, err)
			}
			if !tt.ok && !errors.Is(err, ErrUnsafeName) {
				t.Fatalf("ValidName(%q) = %v, want ErrUnsafeName", tt.name, err)
			}
		})
	}
}

func TestSplitRel(t *testing.T) {
	tests := []struct {
		rel, dir, base string
		ok             bool
	}{
		{"a", ".", "a", true},
		{"a/b", "a", "b", true},
		{"a/b/c", "a/b", "c", true},
		{"", "", "", false},
		{".", "", "", false},
		{"..", "", "", false},
		{"../x", "", "", false},
		{"/abs", "", "", false},
		{"a/../../b", "", "", false},
		{"a/./b", "", "", false},
		{"a//b", "", "", false},
		{"a/", "", "", false},
		{"a\x00b", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.rel, func(t *testing.T) {
			dir, base, err := splitRel(tt.rel)
			if !tt.ok {
				if !errors.Is(err, ErrUnsafeName) {
					t.Fatalf("splitRel(%q) = %v, want ErrUnsafeName", tt.rel, err)
				}
				return
			}
			if err != nil || dir != tt.dir || base != tt.base {
				t.Fatalf("splitRel(%q) = %q, %q, %v; want %q, %q", tt.rel, dir, base, err, tt.dir, tt.base)
			}
		})
	}
}

func TestJoinRel(t *testing.T) {
	tests := []struct {
		parent, name, want string
		ok                 bool
	}{
		{"", "a", "a", true},
		{"a", "b", "a/b", true},
		{"a/b", "c", "a/b/c", true},
		{"", "..", "", false},
		{"a", "b/c", "", false},
		{"../a", "b", "", false},
		{"/a", "b", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.parent+"|"+tt.name, func(t *testing.T) {
			got, err := JoinRel(tt.parent, tt.name)
			if !tt.ok {
				if !errors.Is(err, ErrUnsafeName) {
					t.Fatalf("JoinRel = %q, %v; want ErrUnsafeName", got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("JoinRel = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// checkLocal fails unless rel is a clean relative path that stays below
// its base whatever directory that is.
func checkLocal(t *testing.T, rel string) {
	t.Helper()
	if !filepath.IsLocal(filepath.FromSlash(rel)) || path.Clean(rel) != rel || strings.ContainsRune(rel, 0) {
		t.Fatalf("accepted path %q is not local and clean", rel)
	}
	for _, elem := range strings.Split(rel, "/") {
		if elem == ".." || elem == "." || elem == "" {
			t.Fatalf("accepted path %q has element %q", rel, elem)
		}
	}
}

func FuzzValidName(f *testing.F) {
	for _, s := range []string{"a", "", ".", "..", "a/b", "a\x00b", "...", "/", "x/..", "\xff"} {
		f.Add("dir", s)
		f.Add("", s)
		f.Add(s, "b")
	}
	f.Fuzz(func(t *testing.T, parent, name string) {
		if ValidName(name) == nil {
			if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
				t.Fatalf("ValidName accepted %q", name)
			}
		}
		joined, err := JoinRel(parent, name)
		if err != nil {
			if !errors.Is(err, ErrUnsafeName) {
				t.Fatalf("JoinRel error %v does not wrap ErrUnsafeName", err)
			}
			return
		}
		checkLocal(t, joined)
		dir, base, err := splitRel(joined)
		if err != nil || base != name {
			t.Fatalf("splitRel(JoinRel(%q, %q)) = %q, %q, %v", parent, name, dir, base, err)
		}
		if want := parent; (want == "" && dir != ".") || (want != "" && dir != want) {
			t.Fatalf("splitRel(%q) dir = %q, want parent %q", joined, dir, parent)
		}
	})
}

func FuzzSplitRel(f *testing.F) {
	for _, s := range []string{"a", "a/b", "../x", "/abs", "a/../../b", "a//b", "a/", "a\x00b", "./a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rel string) {
		dir, base, err := splitRel(rel)
		if err != nil {
			if !errors.Is(err, ErrUnsafeName) {
				t.Fatalf("splitRel error %v does not wrap ErrUnsafeName", err)
			}
			return
		}
		checkLocal(t, rel)
		if ValidName(base) != nil {
			t.Fatalf("splitRel(%q) base %q is not a valid name", rel, base)
		}
		if dir != "." {
			checkLocal(t, dir)
			if dir+"/"+base != rel {
				t.Fatalf("splitRel(%q) = %q + %q", rel, dir, base)
			}
		} else if base != rel {
			t.Fatalf("splitRel(%q) = %q + %q", rel, dir, base)
		}
	})
}
