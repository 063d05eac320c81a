package ui

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/engine/treewalk"
	"github.com/cloudstic/cloudstic/internal/frontend"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
)

// routes registers every page. {repo} is the repository's position in
// Config.Repos, never its name.
func (s *Server) routes() {
	m := http.NewServeMux()
	m.Handle("GET /static/", staticFiles())
	m.HandleFunc("GET /{$}", s.handleIndex)
	m.HandleFunc("GET /metrics", s.handleMetrics)
	m.HandleFunc("GET /r/{repo}/{$}", s.handleRepo)
	m.HandleFunc("GET /r/{repo}/growth.svg", s.handleGrowth)
	m.HandleFunc("GET /r/{repo}/locks", s.handleLockEvents)
	m.HandleFunc("GET /r/{repo}/find", s.handleFind)
	m.HandleFunc("GET /r/{repo}/diff", s.handleDiff)
	m.HandleFunc("GET /r/{repo}/s/{snap}/{$}", s.handleBrowse)
	m.HandleFunc("GET /r/{repo}/s/{snap}/download", s.handleDownload)
	m.HandleFunc("GET /r/{repo}/s/{snap}/restore", s.handleRestoreForm)
	m.HandleFunc("POST /r/{repo}/s/{snap}/restore", s.handleRestore)
	m.HandleFunc("POST /r/{repo}/run/{action}", s.handleRun)
	m.HandleFunc("GET /jobs/{job}", s.handleJob)
	m.HandleFunc("GET /jobs/{job}/events", s.handleJobEvents)
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.errorPage(w, r, http.StatusNotFound, "Not found", "There is no page at this address.")
	})
	s.mux = m
}

// repoIndex returns the repository the request names, or answers 404.
func (s *Server) repoIndex(w http.ResponseWriter, r *http.Request) (int, bool) {
	i, ok := parseRepoIndex(r.PathValue("repo"), len(s.cfg.Repos))
	if !ok {
		s.errorPage(w, r, http.StatusNotFound, "Not found", "There is no such repository.")
	}
	return i, ok
}

// parseRepoIndex reads the {repo} of a path: the position, written in its
// one canonical form (no sign, no leading zero), of one of n repositories.
func parseRepoIndex(v string, n int) (int, bool) {
	i, err := strconv.Atoi(v)
	if err != nil || i < 0 || i >= n || strconv.Itoa(i) != v {
		return 0, false
	}
	return i, true
}

// readFunc reads a repository: rr is a fresh view with its index loaded,
// snaps its snapshots oldest first. Damaged index files and snapshots are
// left out (the repository page lists the damaged snapshots).
type readFunc func(ctx context.Context, rr *repo.Repository, snaps []snapshot.WithID) error

// read runs fn under a shared lock named op, as the CLI's read commands
// do: a prune must not delete what the page reads.
func (s *Server) read(ctx context.Context, i int, op string, fn readFunc) error {
	rr := s.cfg.Repos[i].Repo.Fresh()
	return operation.WithSharedLock(ctx, rr, op, func(ctx context.Context, view *repo.Repository) error {
		if _, err := view.LoadIndex(ctx); err != nil {
			return err
		}
		snaps, _, err := view.Snapshots(ctx)
		if err != nil {
			return err
		}
		return fn(ctx, view, snaps)
	})
}

// readError answers a failed read: a missing snapshot is a 404, a lock
// held by someone else a 409 naming the holder, anything else a 500.
func (s *Server) readError(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, repo.ErrNoSnapshot), errors.Is(err, repo.ErrAmbiguous):
		s.errorPage(w, r, http.StatusNotFound, "No such snapshot", frontend.OneLine(err.Error()))
	case errors.Is(err, operation.ErrLocked):
		s.errorPage(w, r, http.StatusConflict, "Repository locked", frontend.OneLine(err.Error()))
	case treewalk.IsBounds(err):
		s.errorPage(w, r, http.StatusUnprocessableEntity, "Snapshot refused", frontend.OneLine(err.Error()))
	case errors.Is(err, context.Canceled):
		// The browser went away.
	default:
		s.errorPage(w, r, http.StatusInternalServerError, "Error", frontend.OneLine(err.Error()))
	}
}
