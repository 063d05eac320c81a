package cli

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestFilesFromParsing: -files-from skips comments and blank lines, trims
// spaces and expands globs (warning about those matching nothing);
// -files-from-verbatim takes lines as they are; -files-from-raw splits on
// NUL only.
func TestFilesFromParsing(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a.log", "b.log", "c.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	in := func(name string) string { return filepath.Join(dir, name) }
	tests := []struct {
		name     string
		parse    func([]byte, func(string, ...any)) ([]string, error)
		data     string
		want     []string
		warnings int
	}{
		{"globs", globLines, "# comment\n\n  " + in("*.log") + " \r\n" + in("c.txt") + "\n" + in("none*") + "\n",
			[]string{in("a.log"), in("b.log"), in("c.txt")}, 1},
		{"glob without match", globLines, in("missing"), nil, 1},
		{"verbatim", verbatimLines, "# not a comment\n\n  spaced  \r\n" + in("*.log") + "\n",
			[]string{"# not a comment", "  spaced  ", in("*.log")}, 0},
		{"raw", rawEntries, "a\nb\x00\x00 c \x00", []string{"a\nb", " c "}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			warnings := 0
			got, err := tt.parse([]byte(tt.data), func(string, ...any) { warnings++ })
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) || warnings != tt.warnings {
				t.Errorf("got %q with %d warnings, want %q with %d", got, warnings, tt.want, tt.warnings)
			}
		})
	}
	if _, err := globLines([]byte("[x"), func(string, ...any) {}); err == nil {
		t.Error("a malformed glob was accepted")
	}
}
