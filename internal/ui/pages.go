package ui

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/frontend"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
)

func (s *Server) handleIndex(w http.ResponseWriter, r *http.Request) {
	views := make([]*repoView, len(s.cfg.Repos))
	for i := range s.cfg.Repos {
		views[i] = s.view(i)
	}
	s.render(w, r, http.StatusOK, "index", pageData{Title: "Repositories", Data: views})
}

// repoPage is the dashboard of one repository.
type repoPage struct {
	Snapshots []snapshot.WithID // newest first
	// Damaged are the snapshots that cannot be read back, left out of
	// every page.
	Damaged  []repo.Damaged
	Timeline any // template.HTML of the SVG
	Locks    lockPanel
	Actions  []frontend.Action
}

// handleRepo shows the dashboard. Listing snapshots and locks reads no
// pack, so it takes no lock (as `list` and `locks`).
func (s *Server) handleRepo(w http.ResponseWriter, r *http.Request) {
	i, ok := s.repoIndex(w, r)
	if !ok {
		return
	}
	rp := s.cfg.Repos[i]
	snaps, damaged, err := rp.Repo.Fresh().Reader().Snapshots(r.Context())
	if err != nil {
		s.readError(w, r, err)
		return
	}
	snapshot.SortByTime(snaps)
	page := repoPage{Timeline: timelineSVG(snaps), Locks: s.lockPanel(r.Context(), i), Damaged: damaged}
	slices.Reverse(snaps)
	page.Snapshots = snaps
	for _, a := range rp.Actions {
		if !a.Writes || !s.cfg.ReadOnly {
			page.Actions = append(page.Actions, a)
		}
	}
	s.render(w, r, http.StatusOK, "repo", pageData{Title: rp.Name, Repo: s.view(i), Data: page})
}

// growthCache is the growth rows of one list of snapshots.
type growthCache struct {
	key  string // the snapshot ids, in order
	rows []operation.GrowthRow
}

// handleGrowth draws the repository's size and deduplication ratio after
// each snapshot. Counting reads every distinct tree once (the engine's stats.Counter:
// its cost follows the trees stored, not the snapshots' logical size),
// and the rows are kept until the list of snapshots changes.
func (s *Server) handleGrowth(w http.ResponseWriter, r *http.Request) {
	i, ok := s.repoIndex(w, r)
	if !ok {
		return
	}
	var rows []operation.GrowthRow
	var key string
	cached := false
	computed, err := operation.Growth(r.Context(), s.fresh(i), "ui", func(snaps []snapshot.WithID) ([]snapshot.WithID, error) {
		snapshot.SortByTime(snaps)
		ids := make([]string, len(snaps))
		for j, sn := range snaps {
			ids[j] = sn.ID.String()
		}
		key = strings.Join(ids, ",")
		s.mu.Lock()
		c, ok := s.growth[i]
		s.mu.Unlock()
		if ok && c.key == key {
			rows, cached = c.rows, true
			return nil, nil // nothing to count
		}
		return snaps, nil
	})
	if err == nil && !cached {
		rows = computed
		s.mu.Lock()
		s.growth[i] = growthCache{key: key, rows: rows}
		s.mu.Unlock()
	}
	if err != nil {
		s.readError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	_, _ = w.Write([]byte(growthSVG(rows))) // the client went away: nothing to do
}

// lockPanel is the live lock panel's data.
type lockPanel struct {
	Repo  int
	Locks []lockRow
	Err   string
}

// lockRow is one lock object as the panel shows it.
type lockRow struct {
	operation.LockInfo
	Kind      string
	State     string
	Remaining int64 // seconds to expiry by the store's clock; <0: expired
}

// lockPanel lists the repository's locks (no password needed, as `locks`).
func (s *Server) lockPanel(ctx context.Context, i int) lockPanel {
	p := lockPanel{Repo: i}
	infos, err := s.cfg.Repos[i].Repo.Locks(ctx)
	if err != nil {
		p.Err = frontend.OneLine(err.Error())
		return p
	}
	for _, l := range infos {
		row := lockRow{LockInfo: l, Kind: l.Kind(), State: "live"}
		switch {
		case l.Err != nil:
			row.State = "unreadable"
		case l.Stale:
			row.State = "stale"
		case l.Dead:
			row.State = "dead"
		}
		if l.Err == nil {
			// The store's now is AcquiredAt+Age: expiry is judged by the
			// store's clock, as the lock does.
			row.Remaining = int64(l.ExpiresAt.Sub(l.AcquiredAt.Add(l.Age)).Seconds())
		}
		p.Locks = append(p.Locks, row)
	}
	return p
}
