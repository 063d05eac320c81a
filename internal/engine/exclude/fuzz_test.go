package exclude

import (
	"errors"
	"testing"
)

// FuzzPattern compiles arbitrary exclude patterns and matches arbitrary
// paths with them: nothing panics; ParsePattern and NewMatcher agree; a
// refused pattern is ErrPattern; and for an accepted pattern p (not itself
// a negation) "!p" alone excludes nothing, "!p" after p re-includes all p
// excluded, and p after "!p" is p alone (the last match wins).
func FuzzPattern(f *testing.F) {
	for _, s := range [][2]string{
		{"*.tmp", "a/b.tmp"}, {"/build/", "build"}, {"docs/**/*.pdf", "docs/x/y/z.pdf"}, {"a**/b", "ab"},
		{"!keep.log", "keep.log"}, {"\\#x", "#x"}, {"[a-", "a"}, {"x\\", "x"}, {"[[:alpha:]]", "a"},
		{"**/**/**/z", "a/a/a/a/a/z"}, {"*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaa"}, {"dir/** ", "dir/x"}, {"#comment", "x"}, {"  ", "x"},
	} {
		f.Add(s[0], s[1], false)
		f.Add(s[0], s[1], true)
	}
	f.Fuzz(func(t *testing.T, pat, rel string, isDir bool) {
		perr := ParsePattern(pat)
		m, merr := NewMatcher([]string{pat})
		switch {
		case perr != nil && !errors.Is(perr, ErrPattern):
			t.Fatalf("ParsePattern(%q): %v does not wrap ErrPattern", pat, perr)
		case merr != nil && !errors.Is(merr, ErrPattern):
			t.Fatalf("NewMatcher(%q): %v does not wrap ErrPattern", pat, merr)
		case merr != nil && perr == nil:
			t.Fatalf("ParsePattern accepts %q, NewMatcher refuses it: %v", pat, merr)
		case merr == nil && perr == nil && m.Empty():
			t.Fatalf("ParsePattern accepts %q, which NewMatcher skips", pat)
		case merr != nil:
			return
		}
		excluded := m.Match(rel, isDir)
		if perr != nil || pat[0] == '!' {
			return
		}
		negated, err := NewMatcher([]string{"!" + pat})
		if err != nil {
			t.Fatalf("NewMatcher(!%q): %v", pat, err)
		}
		if negated.Match(rel, isDir) {
			t.Fatalf("!%q alone excludes %q", pat, rel)
		}
		reincluded, err := NewMatcher([]string{pat, "!" + pat})
		if err != nil {
			t.Fatal(err)
		}
		if reincluded.Match(rel, isDir) {
			t.Fatalf("%q then !%q excludes %q", pat, pat, rel)
		}
		last, err := NewMatcher([]string{"!" + pat, pat})
		if err != nil {
			t.Fatal(err)
		}
		if last.Match(rel, isDir) != excluded {
			t.Fatalf("!%q then %q decides %q otherwise than %q alone", pat, pat, rel, pat)
		}
	})
}
