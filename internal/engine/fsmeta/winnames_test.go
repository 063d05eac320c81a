package fsmeta

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestWindowsName: each kind of name Windows cannot hold is mapped as
// docs/platforms.md says, names it can hold are kept, and every mapping
// undoes.
func TestWindowsName(t *testing.T) {
	tests := []struct {
		name, want string
	}{
		{"plain.txt", "plain.txt"},
		{"100% sure", "100% sure"}, // holdable: kept, % and all
		{"a:b", "a%3Ab"},
		{"a:b%", "a%3Ab%25"},
		{`<>:"\|?*`, "%3C%3E%3A%22%5C%7C%3F%2A"},
		{"tab\there", "tab%09here"},
		{"CON", "%43ON"},
		{"con", "%63on"},
		{"aux.txt", "%61ux.txt"},
		{"Con .log", "%43on .log"},
		{"nul.tar.gz", "%6Eul.tar.gz"},
		{"COM1", "%43OM1"},
		{"lpt9.x", "%6Cpt9.x"},
		{"COM¹", "%43OM¹"},
		{"CONIN$", "%43ONIN$"},
		{"CONSOLE", "CONSOLE"},
		{"COM10", "COM10"},
		{"xcon", "xcon"},
		{"trailing.", "trailing%2E"},
		{"trailing ", "trailing%20"},
		{"a..", "a.%2E"},
		{".hidden", ".hidden"},
		{"bad\xffutf8", "bad%FFutf8"},
		{"ünïcödé", "ünïcödé"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, mapped := WindowsName(tt.name)
			if got != tt.want || mapped != (tt.want != tt.name) {
				t.Fatalf("WindowsName(%q) = %q, %v; want %q", tt.name, got, mapped, tt.want)
			}
			if mapped {
				if back := UnmapWindowsName(got); back != tt.name {
					t.Errorf("UnmapWindowsName(%q) = %q, want %q", got, back, tt.name)
				}
				if windowsNeedsMapping(got) {
					t.Errorf("the mapped name %q still needs mapping", got)
				}
			}
		})
	}
}

// FuzzWindowsName: a mapped name is one Windows can hold (as Go's
// filepath.IsLocal judges on Windows), is valid UTF-8, and maps back to
// the name; a name kept is one Windows could hold already.
func FuzzWindowsName(f *testing.F) {
	for _, s := range []string{"a", "CON", "a:b", "x.", "100%", "\xff", "com¹.txt", "a%3Ab"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
			return // never a snapshot name
		}
		got, mapped := WindowsName(name)
		if !mapped {
			if got != name || windowsNeedsMapping(name) {
				t.Fatalf("WindowsName(%q) = %q, kept", name, got)
			}
			return
		}
		if windowsNeedsMapping(got) || !utf8.ValidString(got) {
			t.Fatalf("WindowsName(%q) = %q, which Windows cannot hold", name, got)
		}
		if runtime.GOOS == "windows" && !filepath.IsLocal(got) {
			t.Fatalf("WindowsName(%q) = %q, which filepath.IsLocal refuses", name, got)
		}
		if back := UnmapWindowsName(got); back != name {
			t.Fatalf("UnmapWindowsName(WindowsName(%q)) = %q", name, back)
		}
	})
}
