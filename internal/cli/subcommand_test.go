package cli

import (
	"strings"
	"testing"
)

// TestSubcommandDispatch: profile, store and schedule answer a missing, a
// help and an unknown subcommand, and a missing NAME, the same way.
func TestSubcommandDispatch(t *testing.T) {
	cases := []struct {
		args   []string
		code   int
		output string // in stdout+stderr
	}{
		{[]string{"profile"}, ExitUsage, "usage: cloudstic profile list | show NAME | new"},
		{[]string{"store"}, ExitUsage, "usage: cloudstic store list | show NAME | new"},
		{[]string{"schedule"}, ExitUsage, "usage: cloudstic schedule install|list|remove"},
		{[]string{"profile", "-h"}, ExitOK, "usage: cloudstic profile"},
		{[]string{"store", "-h"}, ExitOK, "usage: cloudstic store"},
		{[]string{"schedule", "-h"}, ExitOK, "usage: cloudstic schedule"},
		{[]string{"profile", "lst"}, ExitUsage, `unknown subcommand "lst" of profile (want list, show or new)`},
		{[]string{"store", "lst"}, ExitUsage, `unknown subcommand "lst" of store (want list, show, new, verify or init)`},
		{[]string{"schedule", "lst"}, ExitUsage, `unknown subcommand "lst" of schedule (want install, list or remove)`},
		{[]string{"profile", "show"}, ExitUsage, "usage: cloudstic profile show NAME"},
		{[]string{"store", "show", "a", "b"}, ExitUsage, "usage: cloudstic store show NAME"},
		{[]string{"store", "verify"}, ExitUsage, "usage: cloudstic store verify NAME"},
		{[]string{"store", "init"}, ExitUsage, "usage: cloudstic store init [-yes] NAME"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			r := uxRun(t, "", c.args...)
			if r.code != c.code || !strings.Contains(r.stdout+r.stderr, c.output) {
				t.Fatalf("exit %d (want %d)\nstdout: %s\nstderr: %s\nwant %q", r.code, c.code, r.stdout, r.stderr, c.output)
			}
		})
	}
}
