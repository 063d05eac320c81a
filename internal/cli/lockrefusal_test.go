package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// A command refused by locks says so in one line that names every holder
// and ends with what to do.
func TestLockRefusalNamesHoldersAndHints(t *testing.T) {
	dir := t.TempDir()
	uxOK(t, dir, "init", "-password", "pw")
	st := local.New(filepath.Join(dir, "store"))
	ctx := context.Background()
	cases := []struct {
		name    string
		holders int
		want    []string
	}{
		{"one holder", 1, []string{"repository is locked (shared) by host-0 (pid 100) (operation: backup, acquired: "}},
		{"three holders", 3, []string{"repository is locked by 3 holders: shared by host-0 (pid 100) (operation: backup, acquired: ",
			"shared by host-1 (pid 101)", "shared by host-2 (pid 102)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for i := range c.holders {
				l, err := lock.AcquireShared(ctx, st, "backup", lock.Options{Hostname: fmt.Sprintf("host-%d", i), PID: 100 + i})
				if err != nil {
					t.Fatal(err)
				}
				defer func() { _ = l.Release(ctx) }() // a failed release shows in the next case's refusal
			}
			r := uxRun(t, dir, "prune", "-password", "pw")
			if r.code != ExitError || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
				t.Fatalf("exit %d, want %d and one line:\n%s", r.code, ExitError, r.stderr)
			}
			want := append(slices.Clip(c.want), "; retry with -lock-wait 10m, or see cloudstic locks\n")
			for _, w := range want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
			if !strings.HasSuffix(r.stderr, want[len(want)-1]) || strings.Contains(r.stderr, "break-lock") {
				t.Errorf("stderr does not end with the hint, or suggests break-lock for live holders:\n%s", r.stderr)
			}
		})
	}
}
