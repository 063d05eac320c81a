package ui

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/engine/restore"
	"github.com/cloudstic/cloudstic/internal/frontend"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// errTarget: a restore target the dashboard refuses.
var errTarget = errors.New("bad restore target")

// restorePage is the form that asks for a target and a confirmation.
type restorePage struct {
	Snap        string
	Path        string // from the snapshot root, "" for all of it
	Target      string
	RestoreRoot string
	Overwrite   string
	Verify      bool
	Err         string
}

// OverwriteModes are the choices of the form, as restore -overwrite.
func (restorePage) OverwriteModes() []restore.Overwrite {
	return []restore.Overwrite{restore.OverwriteNever, restore.OverwriteIfChanged, restore.OverwriteIfNewer, restore.OverwriteAlways}
}

// restoreTarget checks a target the browser sent: an absolute path, and
// with -restore-root inside that directory once symbolic links in its
// existing part are resolved. A .zip name restores into a zip file.
func restoreTarget(target, root string) (string, error) {
	if target == "" {
		return "", fmt.Errorf("%w: give the directory (or .zip file) to restore into", errTarget)
	}
	if strings.ContainsRune(target, 0) || !filepath.IsAbs(target) {
		return "", fmt.Errorf("%w: %q is not an absolute path", errTarget, target)
	}
	target = filepath.Clean(target)
	if root == "" {
		return target, nil
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", fmt.Errorf("%w: -restore-root %s: %w", errTarget, root, err)
	}
	resolved, err := resolveExisting(target)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %w", errTarget, target, err)
	}
	rel, err := filepath.Rel(realRoot, resolved)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%w: %s is outside the restore root %s", errTarget, target, root)
	}
	return resolved, nil
}

// confine opens the restore root, when there is one, and makes
// opts.Output (a target restoreTarget accepted) relative to it, so that the
// restore stays inside the root even if a directory on the way to the
// target is replaced by a symbolic link after the check. The caller closes
// the root when the restore ends.
func confine(root string, opts *restore.Options) (*os.Root, error) {
	if root == "" {
		return nil, nil
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, fmt.Errorf("%w: -restore-root %s: %w", errTarget, root, err)
	}
	rel, err := filepath.Rel(realRoot, opts.Output)
	if err != nil || !filepath.IsLocal(rel) {
		return nil, fmt.Errorf("%w: %s is outside the restore root %s", errTarget, opts.Output, root)
	}
	within, err := os.OpenRoot(realRoot)
	if err != nil {
		return nil, fmt.Errorf("%w: -restore-root %s: %w", errTarget, root, err)
	}
	opts.Within, opts.Output = within, rel
	return within, nil
}

// resolveExisting resolves the symbolic links of the longest existing
// prefix of p (a clean absolute path) and appends the rest.
func resolveExisting(p string) (string, error) {
	rest := ""
	for cur := p; ; cur = filepath.Dir(cur) {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) || cur == filepath.Dir(cur) {
			return "", err
		}
		rest = filepath.Join(filepath.Base(cur), rest)
	}
}

func (s *Server) handleRestoreForm(w http.ResponseWriter, r *http.Request) {
	i, ok := s.repoIndex(w, r)
	if !ok {
		return
	}
	ref, ok := s.snapRef(w, r)
	if !ok {
		return
	}
	if s.cfg.ReadOnly {
		s.errorPage(w, r, http.StatusForbidden, "Read-only", "The dashboard was started with -read-only: it restores nothing.")
		return
	}
	page := restorePage{Snap: ref, Path: cleanPath(r.URL.Query().Get("path")), RestoreRoot: s.cfg.RestoreRoot, Target: s.cfg.RestoreRoot}
	s.render(w, r, http.StatusOK, "restore", pageData{Title: "Restore", Repo: s.view(i), Data: page})
}

// handleRestore restores a snapshot, or a path of it, once confirmed.
func (s *Server) handleRestore(w http.ResponseWriter, r *http.Request) {
	i, ok := s.repoIndex(w, r)
	if !ok {
		return
	}
	ref, ok := s.snapRef(w, r)
	if !ok {
		return
	}
	if s.cfg.ReadOnly {
		s.errorPage(w, r, http.StatusForbidden, "Read-only", "The dashboard was started with -read-only: it restores nothing.")
		return
	}
	page := restorePage{Snap: ref, Path: cleanPath(r.PostFormValue("path")), Target: r.PostFormValue("target"), RestoreRoot: s.cfg.RestoreRoot,
		Overwrite: r.PostFormValue("overwrite"), Verify: r.PostFormValue("verify") == "yes"}
	target, err := restoreTarget(page.Target, s.cfg.RestoreRoot)
	opts := restore.Options{Output: target, Format: restore.FormatDir, Path: page.Path, Overwrite: restore.Overwrite(page.Overwrite), Verify: page.Verify}
	if strings.HasSuffix(strings.ToLower(target), ".zip") {
		opts.Format = restore.FormatZip
	}
	switch {
	case err != nil:
	case opts.Validate() != nil:
		err = opts.Validate()
	case r.PostFormValue("confirm") != "yes":
		err = errors.New("tick the box to confirm the restore")
	}
	if err != nil {
		page.Err = err.Error()
		s.render(w, r, http.StatusBadRequest, "restore", pageData{Title: "Restore", Repo: s.view(i), Data: page})
		return
	}
	if page.Path != "" {
		if err := s.restorePathKind(r.Context(), i, ref, &opts); err != nil {
			s.pathError(w, r, page.Path, err)
			return
		}
	}
	within, err := confine(s.cfg.RestoreRoot, &opts)
	if err != nil {
		page.Err = err.Error()
		s.render(w, r, http.StatusBadRequest, "restore", pageData{Title: "Restore", Repo: s.view(i), Data: page})
		return
	}
	title := fmt.Sprintf("Restore %.8s:/%s to %s", ref, page.Path, target)
	j, err := s.startJob(title, i, func(ctx context.Context, j *job, _ frontend.RunOutput) error {
		if within != nil {
			defer within.Close() //nolint:errcheck // a directory handle: nothing was written through it
		}
		return s.runRestore(ctx, i, ref, target, opts, j)
	})
	if err != nil {
		if within != nil {
			within.Close() //nolint:errcheck // as above, and the job never started
		}
		s.errorPage(w, r, http.StatusInternalServerError, "Error", frontend.OneLine(err.Error()))
		return
	}
	http.Redirect(w, r, "/jobs/"+j.id, http.StatusSeeOther)
}

// runRestore restores under a shared lock, as `cloudstic restore`,
// reporting its progress as the command line does.
func (s *Server) runRestore(ctx context.Context, i int, ref, target string, opts restore.Options, j *job) error {
	rep := &operation.Reporter{Emit: j.setProgress, Clock: s.cfg.Clock}
	opts.Warnf = func(format string, args ...any) { j.line("warning: " + fmt.Sprintf(format, args...)) }
	out, err := operation.Restore(ctx, s.cfg.Repos[i].Repo.Fresh(), ref, opts, rep.Restore)
	if out != nil {
		res := out.Result
		j.summaryf("Restored snapshot %s to %s: %d files, %d dirs, %d symlinks, %s\n", out.Snapshot.ID.Short(),
			target, res.Files, res.Dirs, res.Symlinks, frontend.HumanBytes(res.Bytes))
		if len(res.Skipped) > 0 {
			j.summaryf("%d existing files were left untouched\n", len(res.Skipped))
		}
		for _, d := range res.Damaged {
			j.summaryf("damaged: %s\n", d)
		}
	}
	return err
}

// restorePathKind sets opts.Path the way the engine wants it: a directory
// ends in "/". A path the snapshot does not have fails here, before the
// job starts.
func (s *Server) restorePathKind(ctx context.Context, i int, ref string, opts *restore.Options) error {
	_, n, err := operation.Lookup(ctx, s.fresh(i), "ui", ref, opts.Path)
	if err != nil {
		return err
	}
	if n.Type == tree.TypeDir {
		opts.Path += "/"
	}
	return nil
}
