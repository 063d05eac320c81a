package operation

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/cloudstic/cloudstic/internal/engine/dump"
	"github.com/cloudstic/cloudstic/internal/engine/treewalk"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// The read operations: what reads snapshot contents and writes nothing
// (ls, dump, find, diff, stats, the dashboard's pages). Each takes the lock
// its caller names (ReadLock), loads the index and the snapshots
// (IndexedSnapshots), resolves the snapshots the caller names, and runs the
// engine's reader, streaming what it finds to the caller's function where
// the engine streams.

// ReadLock is the lock a read operation holds: a shared lock whose lock
// object names this operation (find, dump, stats, the dashboard's "ui"), or
// none (NoLock: ls and diff, as the seed's lock table gives them).
type ReadLock string

// NoLock reads with no lock.
const NoLock ReadLock = ""

// Errors of the read operations.
var (
	// ErrNotFound: the snapshot has no entry at the path.
	ErrNotFound = treewalk.ErrNotFound
	// ErrNotDir: a path's parent, or a directory listed, is no directory.
	ErrNotDir = treewalk.ErrNotDir
	// ErrNotInSnapshot is List's answer for a path the snapshot does not
	// hold.
	ErrNotInSnapshot = errors.New("no such file or directory in the snapshot")
)

// Archive formats of Dump.
const (
	FormatTar = dump.FormatTar
	FormatZip = dump.FormatZip
)

// IsBounds reports whether err is a snapshot refused by the tree bounds
// (too deep, too many entries; see treewalk.Measurer).
func IsBounds(err error) bool { return treewalk.IsBounds(err) }

// withRead runs fn holding lk on r, with the repository to read and its
// snapshots, oldest first, its index loaded (IndexedSnapshots).
func withRead(ctx context.Context, r *Repo, lk ReadLock, fn func(ctx context.Context, rr *repo.Repository, snaps []snapshot.WithID) error) error {
	run := func(ctx context.Context, rr *repo.Repository) error {
		snaps, err := IndexedSnapshots(ctx, rr)
		if err != nil {
			return err
		}
		return fn(ctx, rr, snaps)
	}
	if lk == NoLock {
		return run(ctx, r.r)
	}
	return withSharedLock(ctx, r, string(lk), run)
}

// withSnapshot is withRead for the one snapshot ref names ("latest", an id
// or a prefix: repo.FindSnapshot).
func withSnapshot(ctx context.Context, r *Repo, lk ReadLock, ref string, fn func(ctx context.Context, rr *repo.Repository, snap snapshot.WithID) error) error {
	return withRead(ctx, r, lk, func(ctx context.Context, rr *repo.Repository, snaps []snapshot.WithID) error {
		snap, err := repo.FindSnapshot(snaps, ref, nil)
		if err != nil {
			return err
		}
		return fn(ctx, rr, snap)
	})
}

// List calls fn for the entries of the snapshot ref names (ls), in tree
// order, as it reads them: with no paths, every entry; otherwise, for each
// path (from the snapshot root, or an absolute path under the snapshot's
// source directory: treewalk.Relative), the entry there and everything
// below it. A path the snapshot does not hold fails with ErrNotInSnapshot.
// An error of the walk (fn's too) names the snapshot. It returns the
// snapshot listed.
func List(ctx context.Context, r *Repo, lk ReadLock, ref string, paths []string, fn func(p string, n *tree.Node) error) (snapshot.WithID, error) {
	var out snapshot.WithID
	err := withSnapshot(ctx, r, lk, ref, func(ctx context.Context, rr *repo.Repository, snap snapshot.WithID) error {
		out = snap
		var err error
		if len(paths) == 0 {
			err = treewalk.Walk(ctx, rr, snap.Tree, "", fn)
		}
		for _, arg := range paths {
			if err = listUnder(ctx, rr, snap.Snapshot, arg, fn); err != nil {
				break
			}
		}
		if err != nil {
			return fmt.Errorf("snapshot %s: %w", snap.ID.Short(), err)
		}
		return nil
	})
	return out, err
}

// listUnder lists the entry at arg and, for a directory, everything below
// it.
func listUnder(ctx context.Context, r *repo.Repository, s *snapshot.Snapshot, arg string, fn func(p string, n *tree.Node) error) error {
	p := treewalk.Relative(s, arg)
	n, err := treewalk.Lookup(ctx, r, s.Tree, p)
	if errors.Is(err, treewalk.ErrNotFound) || errors.Is(err, treewalk.ErrNotDir) {
		return fmt.Errorf("%s: %w", arg, ErrNotInSnapshot)
	}
	if err != nil {
		return err
	}
	if p != "" {
		if err := fn(p, &n); err != nil {
			return err
		}
	}
	if n.Type != tree.TypeDir {
		return nil
	}
	return treewalk.Walk(ctx, r, n.Subtree, p, fn)
}

// Lookup returns the snapshot ref names and its entry at p, a path from
// the snapshot root without leading "/" ("" is the root). A path it does
// not hold fails with ErrNotFound or ErrNotDir.
func Lookup(ctx context.Context, r *Repo, lk ReadLock, ref, p string) (snapshot.WithID, tree.Node, error) {
	var snap snapshot.WithID
	var n tree.Node
	err := withSnapshot(ctx, r, lk, ref, func(ctx context.Context, rr *repo.Repository, s snapshot.WithID) error {
		snap = s
		var err error
		n, err = treewalk.Lookup(ctx, rr, s.Tree, p)
		return err
	})
	return snap, n, err
}

// Browse returns the snapshot ref names and the entries of its directory
// at p (a path as Lookup's), sorted by name. A path that is no directory
// fails with ErrNotDir, one the snapshot does not hold with ErrNotFound.
func Browse(ctx context.Context, r *Repo, lk ReadLock, ref, p string) (snapshot.WithID, []tree.Node, error) {
	var snap snapshot.WithID
	var entries []tree.Node
	err := withSnapshot(ctx, r, lk, ref, func(ctx context.Context, rr *repo.Repository, s snapshot.WithID) error {
		snap = s
		n, err := treewalk.Lookup(ctx, rr, s.Tree, p)
		if err != nil {
			return err
		}
		if n.Type != tree.TypeDir {
			return fmt.Errorf("%s: %w", p, treewalk.ErrNotDir)
		}
		t, err := rr.LoadTree(ctx, n.Subtree)
		if err != nil {
			return err
		}
		entries = t.Nodes
		return nil
	})
	return snap, entries, err
}

// DumpRequest says what Dump writes, and where.
type DumpRequest struct {
	// Ref names the snapshot ("latest", an id or a prefix).
	Ref string
	// Path is the entry to write: a path from the snapshot root, or, with
	// FromSource, also an absolute path under the snapshot's source
	// directory (treewalk.Relative).
	Path       string
	FromSource bool
	// Open is called with the snapshot and the entry found at Path, and
	// returns the format to write it in (FormatTar or FormatZip, or "" for
	// a file's contents) and the writer; an error from it stops Dump.
	Open func(snap snapshot.WithID, n *tree.Node) (format string, w io.Writer, err error)
}

// Dump writes one file's contents (dump.Contents), or an entry and what is
// below it as an archive (dump.Archive), of the snapshot req names, to the
// writer req.Open returns. It returns the snapshot (zero when ref names
// none) and whether Open was called: an error before it is the snapshot's
// or the path's lookup, an error after it Open's or the writing's.
func Dump(ctx context.Context, r *Repo, lk ReadLock, req DumpRequest) (snap snapshot.WithID, opened bool, err error) {
	err = withSnapshot(ctx, r, lk, req.Ref, func(ctx context.Context, rr *repo.Repository, s snapshot.WithID) error {
		snap = s
		rel := req.Path
		if req.FromSource {
			rel = treewalk.Relative(s.Snapshot, req.Path)
		}
		n, err := treewalk.Lookup(ctx, rr, s.Tree, rel)
		if err != nil {
			return err
		}
		opened = true
		format, w, err := req.Open(s, &n)
		if err != nil {
			return err
		}
		if format == "" {
			return dump.Contents(ctx, rr, &n, w)
		}
		return dump.Archive(ctx, rr, treewalk.Root(s.Tree, s.Root), rel, format, w)
	})
	return snap, opened, err
}
