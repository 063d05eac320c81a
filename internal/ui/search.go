package ui

import (
	"errors"
	"net/http"
	"slices"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/frontend"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
)

// Limits of what one page lists; the page says when it stopped.
const (
	maxFindResults = 500
	maxDiffChanges = 2000
)

// errEnough stops a search that found a page's worth.
var errEnough = errors.New("enough results")

// errNoChoice stops a diff page whose two snapshots are not chosen yet.
var errNoChoice = errors.New("no snapshots chosen")

// newestFirst sorts snaps newest first: the order of the pages' lists and
// searches.
func newestFirst(snaps []snapshot.WithID) ([]snapshot.WithID, error) {
	snapshot.SortByTime(snaps)
	slices.Reverse(snaps)
	return snaps, nil
}

// findPage is the result of a file-name search.
type findPage struct {
	Query      string
	IgnoreCase bool
	Matches    []operation.FindMatch
	More       bool // stopped at maxFindResults
}

// handleFind searches every snapshot, newest first, with the find engine.
func (s *Server) handleFind(w http.ResponseWriter, r *http.Request) {
	i, ok := s.repoIndex(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	page := findPage{Query: q.Get("q"), IgnoreCase: q.Get("i") != ""}
	pd := pageData{Title: "Find", Repo: s.view(i), Data: &page}
	if page.Query == "" {
		s.render(w, r, http.StatusOK, "find", pd)
		return
	}
	opts := operation.FindOptions{Patterns: []string{page.Query}, IgnoreCase: page.IgnoreCase}
	if err := operation.CheckFindPatterns(opts.Patterns); err != nil {
		s.errorPage(w, r, http.StatusBadRequest, "Bad pattern", frontend.OneLine(err.Error()))
		return
	}
	_, err := operation.Find(r.Context(), s.fresh(i), "ui", newestFirst, opts, func(m operation.FindMatch) error {
		if len(page.Matches) == maxFindResults {
			page.More = true
			return errEnough
		}
		page.Matches = append(page.Matches, m)
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		s.readError(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "find", pd)
}

// diffPage compares two snapshots.
type diffPage struct {
	Snapshots []snapshot.WithID // to choose from, newest first
	A, B      string            // the choices, as given
	From, To  snapshot.WithID
	Changes   []operation.DiffChange
	Summary   operation.DiffSummary
	More      bool // stopped listing at maxDiffChanges (the summary counts all)
	Done      bool
}

// handleDiff shows what changed from snapshot a to snapshot b.
func (s *Server) handleDiff(w http.ResponseWriter, r *http.Request) {
	i, ok := s.repoIndex(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	page := diffPage{A: q.Get("a"), B: q.Get("b")}
	for _, ref := range []string{page.A, page.B} {
		if ref != "" && !validRef(ref) {
			s.errorPage(w, r, http.StatusBadRequest, "Bad snapshot id", "Choose two snapshots from the lists.")
			return
		}
	}
	var all []operation.DiffChange
	err := operation.Diff(r.Context(), s.fresh(i), "ui", func(snaps []snapshot.WithID) (from, to snapshot.WithID, err error) {
		if page.Snapshots, err = newestFirst(snaps); err != nil {
			return from, to, err
		}
		if page.A == "" || page.B == "" {
			return from, to, errNoChoice
		}
		if page.From, err = repo.FindSnapshot(snaps, page.A, nil); err != nil {
			return from, to, err
		}
		if page.To, err = repo.FindSnapshot(snaps, page.B, nil); err != nil {
			return from, to, err
		}
		return page.From, page.To, nil
	}, func(c operation.DiffChange) { all = append(all, c) })
	if err == nil {
		page.Summary, page.Done = operation.SummarizeDiff(all), true
		if len(all) > maxDiffChanges {
			all, page.More = all[:maxDiffChanges], true
		}
		page.Changes = all
	}
	if errors.Is(err, errNoChoice) {
		err = nil
	}
	if err != nil {
		s.readError(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "diff", pageData{Title: "Diff", Repo: s.view(i), Data: &page})
}
