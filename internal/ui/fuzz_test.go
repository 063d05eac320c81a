package ui

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo"
)

// FuzzCleanPath cleans arbitrary ?path= values. The result is a path from
// the snapshot root with no empty, "." or ".." element and no "/" at
// either end, cleaning it again changes nothing, and its crumbs walk down
// to it one element at a time.
func FuzzCleanPath(f *testing.F) {
	for _, p := range []string{"", "/", "docs/report.txt", "/docs/", "../../etc/passwd", "a/./b//c/..", "..", "a/../../b", "\x00/x", "é/ü"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		c := cleanPath(p)
		if cleanPath(c) != c {
			t.Fatalf("cleanPath(%q) = %q, which cleans to %q", p, c, cleanPath(c))
		}
		cr := crumbs(c)
		if cr[0].Path != "" || cr[len(cr)-1].Path != c {
			t.Fatalf("crumbs of %q: %+v", c, cr)
		}
		if c == "" {
			return
		}
		elems := strings.Split(c, "/")
		if len(cr) != len(elems)+1 {
			t.Fatalf("%d crumbs for %q", len(cr), c)
		}
		for i, e := range elems {
			if e == "" || e == "." || e == ".." {
				t.Fatalf("cleanPath(%q) = %q: element %q", p, c, e)
			}
			if cr[i+1].Name != e || cr[i+1].Path != strings.Join(elems[:i+1], "/") {
				t.Fatalf("crumb %d of %q: %+v", i+1, c, cr[i+1])
			}
		}
	})
}

// FuzzValidRef checks arbitrary {snap} values: accepted are "latest" and
// repo.MinPrefix to 64 lower-case hex digits, nothing else.
func FuzzValidRef(f *testing.F) {
	for _, r := range []string{"latest", "0123abcd", "0123ABCD", "01234", "012345", strings.Repeat("f", 64), strings.Repeat("f", 65), "../x", "latest/", ""} {
		f.Add(r)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		if !validRef(ref) || ref == "latest" {
			return
		}
		if len(ref) < repo.MinPrefix || len(ref) > 64 {
			t.Fatalf("%q accepted: length %d", ref, len(ref))
		}
		for _, c := range ref {
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				t.Fatalf("%q accepted: %q is not a lower-case hex digit", ref, c)
			}
		}
	})
}

// FuzzParseRepoIndex checks arbitrary {repo} values against 3
// repositories: accepted is only the canonical decimal form of 0, 1 or 2.
func FuzzParseRepoIndex(f *testing.F) {
	for _, v := range []string{"0", "2", "3", "-1", "01", "+1", "1 ", "", "99999999999999999999"} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		const n = 3
		i, ok := parseRepoIndex(v, n)
		if !ok {
			return
		}
		if i < 0 || i >= n || strconv.Itoa(i) != v {
			t.Fatalf("%q accepted as %d", v, i)
		}
	})
}

// FuzzRestoreTarget checks arbitrary restore targets a browser may send
// (without a restore root): accepted ones are clean absolute paths,
// without NUL, that name the target given.
func FuzzRestoreTarget(f *testing.F) {
	for _, p := range []string{"/srv/restore", "/srv/../etc", "relative/dir", "", "/a\x00b", "/x/out.zip", "//double//slash/"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, target string) {
		got, err := restoreTarget(target, "")
		if err != nil {
			return
		}
		if !filepath.IsAbs(got) || filepath.Clean(got) != got || strings.ContainsRune(got, 0) || got != filepath.Clean(target) {
			t.Fatalf("restoreTarget(%q) = %q", target, got)
		}
	})
}
