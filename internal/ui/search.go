package ui

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/cloudstic/cloudstic/internal/engine/diff"
	"github.com/cloudstic/cloudstic/internal/engine/find"
	"github.com/cloudstic/cloudstic/internal/engine/treewalk"
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

// findPage is the result of a file-name search.
type findPage struct {
	Query      string
	IgnoreCase bool
	Matches    []find.Match
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
	opts := find.Options{Patterns: []string{page.Query}, IgnoreCase: page.IgnoreCase}
	if err := find.CheckPatterns(opts.Patterns); err != nil {
		s.errorPage(w, r, http.StatusBadRequest, "Bad pattern", frontend.OneLine(err.Error()))
		return
	}
	err := s.read(r.Context(), i, "ui", func(ctx context.Context, rr *repo.Repository, snaps []snapshot.WithID) error {
		snapshot.SortByTime(snaps)
		slices.Reverse(snaps)
		return find.Run(ctx, rr, snaps, opts, func(m find.Match) error {
			if len(page.Matches) == maxFindResults {
				page.More = true
				return errEnough
			}
			page.Matches = append(page.Matches, m)
			return nil
		})
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
	Changes   []diff.Change
	Summary   diff.Summary
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
	err := s.read(r.Context(), i, "ui", func(ctx context.Context, rr *repo.Repository, snaps []snapshot.WithID) error {
		snapshot.SortByTime(snaps)
		slices.Reverse(snaps)
		page.Snapshots = snaps
		if page.A == "" || page.B == "" {
			return nil
		}
		var err error
		if page.From, err = repo.FindSnapshot(snaps, page.A, nil); err != nil {
			return err
		}
		if page.To, err = repo.FindSnapshot(snaps, page.B, nil); err != nil {
			return err
		}
		var all []diff.Change
		err = diff.Trees(ctx, rr, page.From.Tree, page.To.Tree, "", func(c diff.Change) { all = append(all, c) })
		if treewalk.IsBounds(err) {
			return fmt.Errorf("snapshots %s and %s: %w", page.From.ID.Short(), page.To.ID.Short(), err)
		}
		if err != nil {
			return err
		}
		page.Summary, page.Done = diff.Summarize(all), true
		if len(all) > maxDiffChanges {
			all, page.More = all[:maxDiffChanges], true
		}
		page.Changes = all
		return nil
	})
	if err != nil {
		s.readError(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "diff", pageData{Title: "Diff", Repo: s.view(i), Data: &page})
}
