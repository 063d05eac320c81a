package ui_test

import (
	"context"
	"html"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/treewalk/walktest"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// TestCraftedTrees serves repositories holding crafted snapshots. The
// growth plot reads each tree once: it draws a snapshot whose trees are
// shared 2^40 ways, and refuses one 100,000 levels deep with the depth
// error, as stats does. Browsing reads one directory per page and shows
// both; search, download and diff refuse what they would expand.
func TestCraftedTrees(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC) // between nothing: the fixture's are in March

	shared := newFixture(t, nil)
	c := walktest.NewCrafter(t, shared.writer(t))
	s := c.Snapshot(c.Shared(walktest.SharedLevels, c.File("f", []byte("everywhere\n"))), at).ID.String()
	twin := c.Tree(c.File("f", []byte("twin\n")))
	twins := c.Snapshot(c.Tree(walktest.Dir("a", twin), walktest.Dir("b", twin)), at.Add(time.Hour)).ID.String()

	deep := newFixture(t, nil)
	c = walktest.NewCrafter(t, deep.writer(t))
	d := c.Snapshot(c.Deep(walktest.DeepLevels, c.File("f", []byte("at the bottom\n"))), at).ID.String()
	tooDeepPath := strings.Repeat("d/", tree.MaxDepth+1)

	refused := http.StatusUnprocessableEntity
	tests := []struct {
		name string
		f    *fixture
		path string
		code int
		has  string
	}{
		{"growth with a shared snapshot", shared, "/r/0/growth.svg", 200, "<svg"},
		{"browse shared", shared, "/r/0/s/" + s + "/?path=a/b/a", 200, "b/"},
		{"browse twins", shared, "/r/0/s/" + twins + "/?path=b", 200, "f"},
		{"find through shared", shared, "/r/0/find?q=f", refused, tree.ErrTooManyEntries.Error()},
		{"download shared", shared, "/r/0/s/" + s + "/download?path=a", refused, tree.ErrTooManyEntries.Error()},
		{"diff to shared", shared, "/r/0/diff?a=" + twins + "&b=" + s, refused, tree.ErrTooManyEntries.Error()},
		{"growth with a deep snapshot", deep, "/r/0/growth.svg", refused, tree.ErrTooDeep.Error()},
		{"browse deep", deep, "/r/0/s/" + d + "/?path=d/d/d", 200, "d/"},
		{"browse too deep a path", deep, "/r/0/s/" + d + "/?path=" + tooDeepPath, refused, tree.ErrTooDeep.Error()},
		{"find through deep", deep, "/r/0/find?q=f", refused, tree.ErrTooDeep.Error()},
		{"download deep", deep, "/r/0/s/" + d + "/download", refused, tree.ErrTooDeep.Error()},
	}
	clients := map[*fixture]*http.Client{shared: shared.client(t, true), deep: deep.client(t, true)}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// A guard, not a timed assertion: before the bounds, the
			// growth plot of the deep snapshot took 10 GB and the shared
			// one never finished.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, tc.f.srv.URL+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			res := tc.f.do(t, clients[tc.f], req)
			if res.code != tc.code || !strings.Contains(html.UnescapeString(res.body), tc.has) {
				t.Errorf("%d, want %d with %q:\n%.600s", res.code, tc.code, tc.has, res.body)
			}
		})
	}
}
