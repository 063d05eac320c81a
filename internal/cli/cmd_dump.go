package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"

	"golang.org/x/term"

	"github.com/cloudstic/cloudstic/internal/engine/dump"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/engine/treewalk"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

func runDump(ctx context.Context, a *app, args []string) error {
	fs := a.flags()
	archive := fs.String("archive", "", "write an archive: tar or zip (default: the file's contents for a file, tar for a directory)")
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usageErr("give a snapshot and a path: dump SNAPSHOT|latest PATH (PATH / is the whole snapshot)")
	}
	if *archive != "" && *archive != dump.FormatTar && *archive != dump.FormatZip {
		return usageErr("-archive %q: want tar or zip", *archive)
	}
	r, err := a.openRepo(ctx)
	if err != nil {
		return err
	}
	defer a.closeStore()
	return operation.WithSharedLock(ctx, r, "dump", func(ctx context.Context, rr *repo.Repository) error {
		return a.dump(ctx, rr, pos[0], pos[1], *archive)
	})
}

func (a *app) dump(ctx context.Context, r *repo.Repository, ref, p, archive string) error {
	snaps, err := operation.IndexedSnapshots(ctx, r)
	if err != nil {
		return err
	}
	snap, err := repo.FindSnapshot(snaps, ref, nil)
	if err != nil {
		return err
	}
	rel := treewalk.Relative(snap.Snapshot, p)
	n, err := treewalk.Lookup(ctx, r, snap.Tree, rel)
	if errors.Is(err, treewalk.ErrNotFound) || errors.Is(err, treewalk.ErrNotDir) {
		return fmt.Errorf("snapshot %s has no %s (%w): run 'cloudstic ls %s' to see its files", snap.ID.Short(), p, err, snap.ID.Short())
	}
	if err != nil {
		return err
	}
	if archive == "" {
		switch n.Type {
		case tree.TypeFile:
		case tree.TypeDir:
			archive = dump.FormatTar
		default:
			return fmt.Errorf("%s is a %s, not a file: give -archive tar to get it as an archive entry", p, n.Type)
		}
	}
	if archive != "" && a.stdoutIsTerminal() {
		return usageErr("will not write a %s archive to a terminal: redirect stdout to a file or a pipe", archive)
	}
	out := bufio.NewWriterSize(a.io.Stdout, 256<<10)
	if archive == "" {
		err = dump.Contents(ctx, r, &n, out)
	} else {
		err = dump.Archive(ctx, r, treewalk.Root(snap.Tree, snap.Root), rel, archive, out)
	}
	if treewalk.IsBounds(err) {
		return fmt.Errorf("snapshot %s: %w", snap.ID.Short(), err)
	}
	if err != nil {
		return err
	}
	return out.Flush()
}

// stdoutIsTerminal reports whether stdout is a terminal (looking through
// the recordingWriter that Main wraps around it).
func (a *app) stdoutIsTerminal() bool {
	w := a.io.Stdout
	if rw, ok := w.(*recordingWriter); ok {
		w = rw.w
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
