package walktest

import (
	"context"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// Crafter writes trees and snapshots straight through the repository
// layer, as a key holder with a program of their own could: nothing checks
// that the trees are ones a backup would write.
type Crafter struct {
	t     testing.TB
	r     *repo.Writer
	saver *repo.Saver
}

// NewCrafter starts writing blobs through w, whose repository's index must
// be loaded (or new).
func NewCrafter(t testing.TB, w *repo.Writer) *Crafter {
	t.Helper()
	return &Crafter{t: t, r: w, saver: w.NewSaver(context.Background(), 2, pack.Zstd)}
}

// Tree stores a tree of nodes and returns its id.
func (c *Crafter) Tree(nodes ...tree.Node) id.ID {
	c.t.Helper()
	data, err := tree.Encode(&tree.Tree{Nodes: nodes})
	if err != nil {
		c.t.Fatal(err)
	}
	tid := c.r.Key().ID(data)
	if _, err := c.saver.Save(context.Background(), pack.TreeBlob, tid, data); err != nil {
		c.t.Fatal(err)
	}
	return tid
}

// File stores data as one blob and returns a regular file node holding it.
func (c *Crafter) File(name string, data []byte) tree.Node {
	c.t.Helper()
	b := c.r.Key().ID(data)
	if _, err := c.saver.Save(context.Background(), pack.DataBlob, b, data); err != nil {
		c.t.Fatal(err)
	}
	return tree.Node{Name: name, Type: tree.TypeFile, Mode: 0o644, Size: uint64(len(data)), Content: []id.ID{b}}
}

// Dir returns a directory node whose tree is sub.
func Dir(name string, sub id.ID) tree.Node {
	return tree.Node{Name: name, Type: tree.TypeDir, Mode: 0o755, Subtree: sub}
}

// Deep stores a chain of depth directories, each named "d" and holding
// the next, the last holding leaf; it returns the top tree, whose
// directories reach depth levels below it (depth+len(leaf) entries deep,
// when leaf is not empty).
func (c *Crafter) Deep(depth int, leaf ...tree.Node) id.ID {
	c.t.Helper()
	tid := c.Tree(leaf...)
	for range depth {
		tid = c.Tree(Dir("d", tid))
	}
	return tid
}

// Shared stores levels trees, each holding two directories "a" and "b"
// that are both the next tree, the last holding leaf: a walk of the top
// tree meets 2^levels copies of leaf, with no more than levels+1 trees
// stored.
func (c *Crafter) Shared(levels int, leaf ...tree.Node) id.ID {
	c.t.Helper()
	tid := c.Tree(leaf...)
	for range levels {
		tid = c.Tree(Dir("a", tid), Dir("b", tid))
	}
	return tid
}

// Snapshot stores everything written so far and then a snapshot of the
// tree root taken at at, and returns it.
func (c *Crafter) Snapshot(root id.ID, at time.Time) snapshot.WithID {
	c.t.Helper()
	ctx := context.Background()
	if err := c.saver.Flush(ctx); err != nil {
		c.t.Fatal(err)
	}
	c.saver = c.r.NewSaver(ctx, 2, pack.Zstd)
	s := &snapshot.Snapshot{Time: at, Tree: root, Source: "local:/crafted", Hostname: "crafted", Path: "/crafted",
		Nonce: []byte(at.String())}
	sid, err := c.r.SaveSnapshot(ctx, s)
	if err != nil {
		c.t.Fatal(err)
	}
	return snapshot.WithID{ID: sid, Snapshot: s}
}

// Hostile are snapshots written by a Crafter: two that break the tree
// bounds, and one that shares a directory as a real file system can.
type Hostile struct {
	// Deep nests DeepLevels directories "d", the last holding file "f".
	Deep snapshot.WithID
	// Shared has SharedLevels levels of two directories "a" and "b" that
	// are one tree, the last holding file "f": 2^40 paths to it.
	Shared snapshot.WithID
	// Twins holds directories "a" and "b" that are one tree, each
	// holding file "f" and directory "d" with file "g": 4 files, 4
	// directories.
	Twins snapshot.WithID
}

// The shapes of Hostile's snapshots.
const (
	DeepLevels   = 100_000
	SharedLevels = 40
)

// HostileTime is when the first of Hostile's snapshots was taken; the
// others follow an hour apart (Deep, Shared, Twins).
var HostileTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// WriteHostile writes Hostile's snapshots through w.
func WriteHostile(t testing.TB, w *repo.Writer) Hostile {
	t.Helper()
	c := NewCrafter(t, w)
	var h Hostile
	h.Deep = c.Snapshot(c.Deep(DeepLevels, c.File("f", []byte("at the bottom\n"))), HostileTime)
	h.Shared = c.Snapshot(c.Shared(SharedLevels, c.File("f", []byte("everywhere\n"))), HostileTime.Add(time.Hour))
	twin := c.Tree(c.File("f", []byte("twin\n")), Dir("d", c.Tree(c.File("g", []byte("g\n")))))
	h.Twins = c.Snapshot(c.Tree(Dir("a", twin), Dir("b", twin)), HostileTime.Add(2*time.Hour))
	return h
}

// Guard returns a context for a test that the code before the tree bounds
// ran for ever, or until memory ran out, on Hostile's snapshots: an overrun
// fails with the context's error instead of hanging the suite. It is a
// guard, not a timed assertion: the bounded code takes well under a second.
func Guard(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}
