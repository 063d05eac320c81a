package cli

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/frontend"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
	"github.com/cloudstic/cloudstic/internal/termtext"
)

func runList(ctx context.Context, a *app, args []string) error {
	fs := a.flags()
	if err := a.parseNoArgs(fs, args); err != nil {
		return err
	}
	r, err := a.openRepo(ctx)
	if err != nil {
		return err
	}
	defer a.closeStore()
	// Damaged snapshots are skipped with a warning each (noteDamage):
	// list's document is Cloudstic's, with no room for them.
	snaps, _, err := r.Reader().Snapshots(ctx)
	if err != nil {
		return err
	}
	if a.g.json {
		out := listResult{Snapshots: make([]listEntry, 0, len(snaps))}
		for i, s := range snaps {
			out.Snapshots = append(out.Snapshots, newListEntry(i+1, s))
		}
		a.writeJSON(out)
		return nil
	}
	// Cloudstic's layout: the count, then the table (rows start with "|").
	fmt.Fprintf(a.io.Stdout, "%d snapshots\n", len(snaps))
	snapshotTable(snaps, seqNumbers(snaps), nil).render(a.io.Stdout)
	return nil
}

func runLs(ctx context.Context, a *app, args []string) error {
	fs := a.flags()
	long := fs.Bool("l", false, "long listing: mode, owner, size, time")
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	ref := "latest"
	if len(pos) > 0 {
		ref = pos[0]
	}
	r, err := a.openRepo(ctx)
	if err != nil {
		return err
	}
	defer a.closeStore()
	l := lister{a: a, long: *long, entries: []lsEntry{}}
	// restic's ls SNAPSHOT PATH...: each path and what is below it.
	snap, err := operation.List(ctx, r, operation.NoLock, ref, pos[min(1, len(pos)):], l.print)
	if err != nil {
		return err
	}
	if a.g.json {
		a.writeJSON(lsResult{skippedDamage: a.skipped(), SnapshotID: snap.ID.String(), Entries: l.entries})
	}
	return nil
}

// lister prints ls's entries, or collects them for -json.
type lister struct {
	a       *app
	long    bool
	entries []lsEntry
}

// print prints one entry at p (or keeps it for -json).
func (l *lister) print(p string, n *tree.Node) error {
	if l.a.g.json {
		l.entries = append(l.entries, lsEntry{Path: p, Type: n.Type, Size: n.Size, Mode: fmt.Sprintf("%04o", n.Mode),
			MTime: time.Unix(0, n.MTime).UTC(), UID: n.UID, GID: n.GID, Target: n.LinkTarget})
		return nil
	}
	w := l.a.io.Stdout
	name := termtext.Safe(p)
	switch n.Type {
	case tree.TypeDir:
		name += "/"
	case tree.TypeSymlink:
		name += " -> " + termtext.Safe(n.LinkTarget)
	}
	if l.long {
		fmt.Fprintf(w, "%s %-8s %-8s %10d %s %s\n", modeString(n), owner(n.User, n.UID), owner(n.Group, n.GID),
			n.Size, time.Unix(0, n.MTime).Local().Format("2006-01-02 15:04"), name)
		return nil
	}
	if n.Type == tree.TypeFile {
		fmt.Fprintf(w, "%s  (%s)\n", name, frontend.HumanBytes(int64(n.Size)))
	} else {
		fmt.Fprintln(w, name)
	}
	return nil
}

// tagsText joins tags for a terminal, each rendered with termtext.Safe.
func tagsText(tags []string, sep string) string {
	out := make([]string, len(tags))
	for i, t := range tags {
		out[i] = termtext.Safe(t)
	}
	return strings.Join(out, sep)
}

// owner is a file's user or group name as the snapshot recorded it (any
// bytes the source had), or its number.
func owner(name string, num uint32) string {
	if name != "" {
		return termtext.Safe(name)
	}
	return fmt.Sprint(num)
}

func modeString(n *tree.Node) string {
	m := fs.FileMode(n.Mode & 0o777)
	switch n.Type {
	case tree.TypeDir:
		m |= fs.ModeDir
	case tree.TypeSymlink:
		m |= fs.ModeSymlink
	case tree.TypeFIFO:
		m |= fs.ModeNamedPipe
	case tree.TypeCharDev:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case tree.TypeBlkDev:
		m |= fs.ModeDevice
	case tree.TypeSocket:
		m |= fs.ModeSocket
	}
	return m.String()
}
