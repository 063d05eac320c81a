package ui_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/store"
)

// TestDamagedSnapshotPages plants a junk snapshot and a junk index file:
// every page still works from the good snapshots, and the dashboard lists
// the damaged snapshot with the repair that removes it.
func TestDamagedSnapshotPages(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	var keys []string
	for _, prefix := range []string{repo.SnapshotPrefix, repo.IndexPrefix} {
		junk := make([]byte, 300)
		if _, err := rand.Read(junk); err != nil {
			t.Fatal(err)
		}
		key := prefix + fmt.Sprintf("%x", sha256.Sum256(junk))
		if _, err := f.st.Put(context.Background(), key, junk, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, key)
	}
	c := f.client(t, true)
	s1, s2 := f.s1.ID.String(), f.s2.ID.String()
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"/r/0/", []string{f.s1.ID.Short(), f.s2.ID.Short(), `id="damaged"`, keys[0], "cloudstic repair snapshots"}},
		{"/r/0/growth.svg", []string{"<svg"}},
		{"/r/0/s/latest/", []string{"docs/", "readme.md"}},
		{"/r/0/find?q=*.txt", []string{"/docs/report.txt"}},
		{"/r/0/diff?a=" + s1 + "&b=" + s2, []string{"docs/new.txt"}},
	} {
		t.Run(tc.path, func(t *testing.T) {
			res := f.get(t, c, tc.path)
			if res.code != 200 {
				t.Fatalf("status %d, want 200\n%s", res.code, res.body)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.body, w) {
					t.Errorf("body lacks %q:\n%s", w, res.body)
				}
			}
		})
	}
}
