package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
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
	if *archive != "" && *archive != operation.FormatTar && *archive != operation.FormatZip {
		return usageErr("-archive %q: want tar or zip", *archive)
	}
	r, err := a.openRepo(ctx)
	if err != nil {
		return err
	}
	defer a.closeStore()
	return a.dump(ctx, r, pos[0], pos[1], *archive)
}

func (a *app) dump(ctx context.Context, r *operation.Repo, ref, p, archive string) error {
	out := bufio.NewWriterSize(a.io.Stdout, 256<<10)
	snap, opened, err := operation.Dump(ctx, r, "dump", operation.DumpRequest{Ref: ref, Path: p, FromSource: true,
		Open: func(_ snapshot.WithID, n *tree.Node) (string, io.Writer, error) {
			if archive == "" {
				switch n.Type {
				case tree.TypeFile:
				case tree.TypeDir:
					archive = operation.FormatTar
				default:
					return "", nil, fmt.Errorf("%s is a %s, not a file: give -archive tar to get it as an archive entry", p, n.Type)
				}
			}
			if archive != "" && a.stdoutIsTerminal() {
				return "", nil, usageErr("will not write a %s archive to a terminal: redirect stdout to a file or a pipe", archive)
			}
			return archive, out, nil
		}})
	if !opened && (errors.Is(err, operation.ErrNotFound) || errors.Is(err, operation.ErrNotDir)) {
		return fmt.Errorf("snapshot %s has no %s (%w): run 'cloudstic ls %s' to see its files", snap.ID.Short(), p, err, snap.ID.Short())
	}
	if opened && operation.IsBounds(err) {
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
