package ui

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/frontend"
	"github.com/cloudstic/cloudstic/internal/repo"
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

// fresh returns repository i on a fresh view, for a page to read under a
// shared lock (the read operations of package operation take it), as the
// CLI's read commands do: a prune must not delete what the page reads.
// Damaged index files and snapshots are left out (the repository page
// lists the damaged snapshots).
func (s *Server) fresh(i int) *operation.Repo { return s.cfg.Repos[i].Repo.Fresh() }

// readError answers a failed read: a missing snapshot is a 404, a lock
// held by someone else a 409 naming the holder, anything else a 500.
func (s *Server) readError(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, repo.ErrNoSnapshot), errors.Is(err, repo.ErrAmbiguous):
		s.errorPage(w, r, http.StatusNotFound, "No such snapshot", frontend.OneLine(err.Error()))
	case errors.Is(err, operation.ErrLocked):
		s.errorPage(w, r, http.StatusConflict, "Repository locked", frontend.OneLine(err.Error()))
	case operation.IsBounds(err):
		s.errorPage(w, r, http.StatusUnprocessableEntity, "Snapshot refused", frontend.OneLine(err.Error()))
	case errors.Is(err, context.Canceled):
		// The browser went away.
	default:
		s.errorPage(w, r, http.StatusInternalServerError, "Error", frontend.OneLine(err.Error()))
	}
}
