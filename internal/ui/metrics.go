package ui

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/metrics"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
)

// handleMetrics serves the repositories' metrics in Prometheus's text
// format, behind the dashboard's authentication (a scraper sends the
// token as a bearer token, or the basic credentials). Like the
// repository page it lists snapshots and locks, which reads no pack and
// takes no lock.
func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	repos := make([]metrics.Repository, len(s.cfg.Repos))
	for i := range s.cfg.Repos {
		repos[i] = s.repoMetrics(r.Context(), i)
	}
	w.Header().Set("Content-Type", metrics.ContentType())
	if err := metrics.WriteRepositories(w, repos); err != nil {
		s.errorPage(w, r, http.StatusInternalServerError, "Error", err.Error())
	}
}

// repoMetrics reads the metrics of repository i: its snapshot count and
// newest snapshot's figures, its size when the growth plot has counted
// the same snapshots, its locks by kind.
func (s *Server) repoMetrics(ctx context.Context, i int) metrics.Repository {
	rp := s.cfg.Repos[i]
	m := metrics.Repository{Labels: metrics.Labels{Repository: rp.Store, Profile: rp.Profile}, Size: -1}
	snaps, _, err := rp.Repo.Fresh().Reader().Snapshots(ctx)
	if err == nil {
		m.Up = true
		m.Snapshots = len(snaps)
		snapshot.SortByTime(snaps)
		if n := len(snaps); n > 0 {
			sn := snaps[n-1].Snapshot
			d := time.Duration(sn.Summary.DurationSeconds * float64(time.Second))
			// A snapshot records when its backup started.
			m.Last = &metrics.Last{End: sn.Time.Add(d), Duration: d, BytesAdded: sn.Summary.BytesAdded,
				FilesAdded: sn.Summary.FilesNew + sn.Summary.FilesChanged}
		}
		m.Size = s.cachedSize(i, snaps)
	}
	if infos, err := rp.Repo.Locks(ctx); err == nil {
		m.Locks = map[string]int{"shared": 0, "exclusive": 0, "intent": 0}
		for _, l := range infos {
			m.Locks[l.Kind()]++
		}
	}
	return m
}

// cachedSize is the stored size the growth plot counted for exactly
// snaps (oldest first), or -1: counting reads every tree, too much for
// a scrape.
func (s *Server) cachedSize(i int, snaps []snapshot.WithID) int64 {
	ids := make([]string, len(snaps))
	for j, sn := range snaps {
		ids[j] = sn.ID.String()
	}
	s.mu.Lock()
	c, ok := s.growth[i]
	s.mu.Unlock()
	if !ok || c.key != strings.Join(ids, ",") || len(c.rows) == 0 {
		return -1
	}
	return c.rows[len(c.rows)-1].StoredSize
}
