package restore

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// TestValidate: one set of rules for every caller of a restore.
func TestValidate(t *testing.T) {
	t.Parallel()
	root, err := os.OpenRoot(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close() //nolint:errcheck // a directory handle: nothing was written through it
	for _, tc := range []struct {
		name string
		opts Options
		want string // "" for valid
	}{
		{"defaults", Options{}, ""},
		{"dir, all modes", Options{Format: FormatDir, Overwrite: OverwriteIfChanged, Delete: true, Verify: true}, ""},
		{"zip", Options{Format: FormatZip, Include: []string{"*.txt"}}, ""},
		{"bad format", Options{Format: "tar"}, "-format"},
		{"bad overwrite", Options{Overwrite: "sometimes"}, "-overwrite"},
		{"zip overwrite", Options{Format: FormatZip, Overwrite: OverwriteAlways}, "not zip files"},
		{"zip delete", Options{Format: FormatZip, Delete: true}, "not zip files"},
		{"zip verify", Options{Format: FormatZip, Verify: true}, "not zip files"},
		{"delete include", Options{Delete: true, Include: []string{"*.txt"}}, "-delete cannot be combined"},
		{"delete exclude", Options{Delete: true, Exclude: []string{"*.tmp"}}, "-delete cannot be combined"},
		{"bad include", Options{Include: []string{"#notes"}}, "-include"},
		{"bad exclude", Options{Exclude: []string{""}}, "-exclude"},
		{"confined dry run", Options{DryRun: true, Within: root}, "dry run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			err := opts.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tc.want != "" && (!errors.Is(err, ErrBadOptions) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Validate() = %v, want ErrBadOptions naming %q", err, tc.want)
			case err == nil && opts.Overwrite == "":
				t.Errorf("Validate left the overwrite mode empty")
			}
		})
	}
}
