package exclude

import (
	"errors"
	"strings"
	"testing"
)

// TestMatch checks the rules of the table in Cloudstic's guide and git's
// beyond it, each on files and directories.
func TestMatch(t *testing.T) {
	tests := []struct {
		name     string
		patterns []string
		rel      string
		isDir    bool
		want     bool
	}{
		{"name anywhere", []string{"*.tmp"}, "a/b/x.tmp", false, true},
		{"name not a prefix", []string{"*.tmp"}, "a/x.tmp2", false, false},
		{"dir-only on dir", []string{"cache/"}, "a/cache", true, true},
		{"dir-only on file", []string{"cache/"}, "a/cache", false, false},
		{".git/ at root", []string{".git/"}, ".git", true, true},
		{"any depth", []string{"**/*.log"}, "a/b/c.log", false, true},
		{"any depth at root", []string{"**/*.log"}, "c.log", false, true},
		{"anchored path", []string{"build/output"}, "build/output", false, true},
		{"anchored path not deeper", []string{"build/output"}, "x/build/output", false, false},
		{"leading slash anchors", []string{"/build"}, "build", true, true},
		{"leading slash not deeper", []string{"/build"}, "src/build", true, false},
		{"negation re-includes", []string{"*.log", "!important.log"}, "important.log", false, false},
		{"last match wins", []string{"!important.log", "*.log"}, "important.log", false, true},
		{"escaped hash", []string{`\#notes`}, "#notes", false, true},
		{"escaped bang", []string{`\!x`}, "!x", false, true},
		{"trailing spaces dropped", []string{"a.txt   "}, "a.txt", false, true},
		{"escaped trailing space kept", []string{`a\ `}, "a ", false, true},
		{"escaped trailing space not plain", []string{`a\ `}, "a", false, false},
		{"a/**/b zero dirs", []string{"a/**/b"}, "a/b", false, true},
		{"a/**/b two dirs", []string{"a/**/b"}, "a/x/y/b", false, true},
		{"dir/** not dir itself", []string{"a/**"}, "a", true, false},
		{"dir/** inside", []string{"a/**"}, "a/x/y", false, true},
		{"star does not cross /", []string{"a/*"}, "a/x/y", false, false},
		{"negated class", []string{"[!a]*"}, "b", false, true},
		{"comment skipped", []string{"# x", "", "y"}, "# x", false, false},
		{"git quirk a**/b is a then **/b", []string{"a**/b"}, "ab", true, true},
		{"no patterns", nil, "x", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := NewMatcher(tt.patterns)
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Match(tt.rel, tt.isDir); got != tt.want {
				t.Errorf("Match(%q, dir=%v) with %q = %v, want %v", tt.rel, tt.isDir, tt.patterns, got, tt.want)
			}
		})
	}
}

func TestBadPatterns(t *testing.T) {
	for _, p := range []string{"[x", `x\`, "[[:alpha:]]", "a/[b"} {
		t.Run(p, func(t *testing.T) {
			if _, err := NewMatcher([]string{p}); !errors.Is(err, ErrPattern) {
				t.Errorf("NewMatcher(%q) = %v, want ErrPattern", p, err)
			}
			if err := ParsePattern(p); !errors.Is(err, ErrPattern) {
				t.Errorf("ParsePattern(%q) = %v, want ErrPattern", p, err)
			}
		})
	}
	for _, p := range []string{"", "#x", "   "} {
		if err := ParsePattern(p); !errors.Is(err, ErrPattern) {
			t.Errorf("ParsePattern(%q) = %v: a flag that is no pattern must be refused", p, err)
		}
	}
}

func TestReadLines(t *testing.T) {
	lines, err := ReadLines(strings.NewReader("# c\r\n\r\n*.tmp\r\ncache/\nlast"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"# c", "", "*.tmp", "cache/", "last"}
	if strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Errorf("ReadLines = %q, want %q", lines, want)
	}
}
