package treewalk_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/treewalk"
	"github.com/cloudstic/cloudstic/internal/engine/treewalk/walktest"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// TestWalkBounds walks crafted trees: too deep and shared beyond the
// budget, they fail before the callback sees an entry; at the limits, and
// with legitimately shared directories, they are walked whole.
func TestWalkBounds(t *testing.T) {
	r := walktest.New(t)
	w, _ := r.Writer(t)
	c := walktest.NewCrafter(t, w)
	file := c.File("f", []byte("x"))
	tests := []struct {
		name    string
		root    id.ID
		prefix  string
		want    error
		entries int
	}{
		{"100,000 levels deep", c.Deep(100_000), "", tree.ErrTooDeep, 0},
		{"deepest allowed: a file at depth MaxDepth", c.Deep(tree.MaxDepth-1, file), "", nil, tree.MaxDepth},
		{"one level too deep", c.Deep(tree.MaxDepth, file), "", tree.ErrTooDeep, 0},
		{"the prefix counts", c.Deep(tree.MaxDepth-1, file), "x", tree.ErrTooDeep, 0},
		{"shared 2^40 ways", c.Shared(40, file), "", tree.ErrTooManyEntries, 0},
		{"two identical directories", c.Tree(walktest.Dir("a", c.Tree(file)), walktest.Dir("b", c.Tree(file))), "", nil, 4},
		{"shared 2^10 ways", c.Shared(10, file), "", nil, 2*(1<<10) - 2 + 1<<10},
	}
	c.Snapshot(tests[0].root, time.Now()) // flushes the trees
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			seen := 0
			err := treewalk.Walk(walktest.Guard(t), r.Repository, tc.root, tc.prefix, func(string, *tree.Node) error {
				seen++
				return nil
			})
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if seen != tc.entries {
				t.Errorf("the walk met %d entries, want %d", seen, tc.entries)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("error of several lines: %q", err)
			}
		})
	}
}

// TestMeasureSharedOnce measures a DAG shared 2^40 ways without the budget
// (as stats does): each tree is read once, and the counts are exact.
func TestMeasureSharedOnce(t *testing.T) {
	r := walktest.New(t)
	w, _ := r.Writer(t)
	c := walktest.NewCrafter(t, w)
	root := c.Shared(40, c.File("f", []byte("x")))
	c.Snapshot(root, time.Now())
	m := treewalk.NewMeasurer(r.Repository)
	m.Unlimited = true
	reads := map[id.ID]int{}
	m.OnTree = func(tid id.ID, _ *tree.Tree) error {
		reads[tid]++
		return nil
	}
	s, err := m.Measure(walktest.Guard(t), root, "")
	if err != nil {
		t.Fatal(err)
	}
	if s.Entries != tree.MaxEntries+1 || s.Height != 41 {
		t.Errorf("size %+v, want more than the budget and 41 levels", s)
	}
	if len(reads) != 41 {
		t.Errorf("%d trees read, want 41", len(reads))
	}
	for tid, n := range reads {
		if n != 1 {
			t.Errorf("tree %s read %d times", tid.Short(), n)
		}
	}
	// A second snapshot sharing the trees reads none of them again.
	if _, err := m.Measure(walktest.Guard(t), root, ""); err != nil || len(reads) != 41 {
		t.Errorf("measuring again: %v, %d trees read", err, len(reads))
	}
}

// TestErrorNamesThePath: the depth error names where the limit was
// crossed, abbreviated to one short line.
func TestErrorNamesThePath(t *testing.T) {
	r := walktest.New(t)
	w, _ := r.Writer(t)
	c := walktest.NewCrafter(t, w)
	long := strings.Repeat("n", 255)
	tid := c.Tree()
	for range tree.MaxDepth + 1 {
		tid = c.Tree(walktest.Dir(long, tid))
	}
	c.Snapshot(tid, time.Now())
	_, err := treewalk.NewMeasurer(r.Repository).Measure(walktest.Guard(t), tid, "")
	if !errors.Is(err, tree.ErrTooDeep) {
		t.Fatalf("got %v, want ErrTooDeep", err)
	}
	msg := err.Error()
	if len(msg) > 400 || !strings.HasPrefix(msg, long[:50]) || !strings.Contains(msg, "4097 levels") {
		t.Errorf("message %q: want the start and end of the path, its depth, under 400 bytes", msg)
	}
}

func TestLookupTooDeep(t *testing.T) {
	r := walktest.New(t)
	w, _ := r.Writer(t)
	c := walktest.NewCrafter(t, w)
	root := c.Tree()
	c.Snapshot(root, time.Now())
	_, err := treewalk.Lookup(context.Background(), r.Repository, root, strings.Repeat("a/", tree.MaxDepth+1))
	if !errors.Is(err, tree.ErrTooDeep) {
		t.Errorf("got %v, want ErrTooDeep", err)
	}
}
