package cli

import (
	"strings"
	"testing"
)

// TestCompatPasswordWarning: the warning about -password on the command
// line goes to stderr once, only with -verbose when stderr is not a
// terminal (a script's run, which Cloudstic never warned), and never
// with -json or -quiet.
func TestCompatPasswordWarning(t *testing.T) {
	dir := t.TempDir()
	uxOK(t, dir, "init", "-password", "pw")
	const warning = "warning: -password on the command line"
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"script", []string{"list", "-password", "pw"}, 0},
		{"verbose", []string{"list", "-verbose", "-password", "pw"}, 1},
		{"json", []string{"list", "-json", "-verbose", "-password", "pw"}, 0},
		{"quiet", []string{"list", "-quiet", "-password", "pw"}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := uxOK(t, dir, tc.args...)
			if n := strings.Count(r.stderr, warning); n != tc.want {
				t.Errorf("%d warnings, want %d\nstderr: %s", n, tc.want, r.stderr)
			}
			if strings.Contains(r.stdout, warning) {
				t.Errorf("the warning is on stdout:\n%s", r.stdout)
			}
		})
	}
}
