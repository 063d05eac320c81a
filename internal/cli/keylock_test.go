package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// TestKeyRemovalTakesExclusiveLock holds a shared lock on the repository, as
// a running backup does: removing a key slot (remove, passwd) fails with the
// lock's holder named, adding one works; once the lock is gone, removal works.
func TestKeyRemovalTakesExclusiveLock(t *testing.T) {
	dir := t.TempDir()
	uxOK(t, dir, "init", "-password", "one")
	uxOK(t, dir, "key", "add", "-label", "laptop", "-new-password", "two", "-password", "one")
	ctx := context.Background()
	held, err := lock.AcquireShared(ctx, local.New(filepath.Join(dir, "store")), "backup", lock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		args     []string
		code     int
		contains string
	}{
		{[]string{"key", "remove", "laptop", "-password", "one"}, ExitError, "locked"},
		{[]string{"key", "passwd", "-new-password", "three", "-password", "one"}, ExitError, "locked"},
		{[]string{"key", "add", "-label", "desk", "-new-password", "four", "-password", "one"}, ExitOK, "added"},
	}
	for _, s := range steps {
		r := uxRun(t, dir, s.args...)
		if r.code != s.code || !strings.Contains(r.stdout+r.stderr, s.contains) {
			t.Fatalf("%v with a backup running: exit %d (want %d)\nstdout: %s\nstderr: %s\nwant %q", s.args, r.code, s.code, r.stdout, r.stderr, s.contains)
		}
	}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	uxOK(t, dir, "key", "remove", "laptop", "-password", "one")
	uxOK(t, dir, "key", "passwd", "-new-password", "three", "-password", "one")
	if r := uxRun(t, dir, "locks"); r.code != ExitOK || strings.Contains(r.stdout, "key") {
		t.Fatalf("locks after the key commands: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
