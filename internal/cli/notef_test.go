package cli

import (
	"bytes"
	"testing"
)

// TestStoreNotes: a store's lines about riding out an outage (retries,
// reconnects) reach stderr with -verbose only: by default, and with
// -quiet, a command that fails prints one error line, not the outage it
// rode out before.
func TestStoreNotes(t *testing.T) {
	cases := []struct {
		name           string
		verbose, quiet bool
		want           bool
	}{
		{"default", false, false, false},
		{"verbose", true, false, true},
		{"quiet", false, true, false},
		{"verbose and quiet", true, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stderr bytes.Buffer
			a := &app{io: IO{Stderr: &stderr, Getenv: func(string) string { return "" }}, cmd: &command{name: "backup"}}
			a.g.repo.URI = "local:" + t.TempDir()
			a.g.verbose, a.g.quiet = c.verbose, c.quiet
			o, err := a.storeOptions(false)
			if err != nil {
				t.Fatal(err)
			}
			if got := o.Notef != nil; got != c.want {
				t.Fatalf("Notef set = %v, want %v", got, c.want)
			}
			if c.want {
				o.Notef("sftp: reconnected to %s at attempt %d", "h:22", 2)
				if got := stderr.String(); got != "sftp: reconnected to h:22 at attempt 2\n" {
					t.Errorf("stderr = %q", got)
				}
			}
		})
	}
}
