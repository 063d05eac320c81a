package check

import (
	"fmt"
	"strings"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo"
)

// What to do about a damaged snapshot or index file.
const (
	repairSnapshotsHint = "'cloudstic repair snapshots' removes it"
	repairIndexHint     = "'cloudstic repair index' rebuilds the index from the packs"
)

// addLoadErr reports a snapshot or index file that could not be loaded:
// damage as an error naming the repair that deals with it (hint), any
// other failure as a read error. It reports whether it was damage.
func (c *checker) addLoadErr(key string, err error, hint string) bool {
	if !repo.IsDamage(err) {
		c.addErr(key, err, "%v", err)
		return false
	}
	c.add(KindCorrupt, key, "%s; %s", strings.TrimPrefix(err.Error(), key+": "), hint)
	return true
}

// unindexedNote is the note on a pack no readable index file names: with
// a damaged index file, that file may be the one naming it. Otherwise it
// says what prune does with it, by prune's rule: a pack written within
// its margin before now (or at a time the store does not report) may
// belong to a backup still running, and is kept.
func unindexedNote(damagedIndex bool, written, now time.Time, margin time.Duration) string {
	if damagedIndex {
		return "pack is in no readable index: a damaged index file may name it (" + repairIndexHint + ")"
	}
	if written.IsZero() || !written.Before(now.Add(-margin)) {
		return fmt.Sprintf("pack is in no index, written less than %s ago (prune's -margin): a backup still running may need it, "+
			"so prune keeps it until it is older, then removes it unless an index names it by then", shortDuration(margin))
	}
	return fmt.Sprintf("pack is in no index: unreferenced leftover of an interrupted backup or prune, older than prune's %s margin (prune removes it)", shortDuration(margin))
}

// shortDuration is d as "1h", "90m" or "30s": time.Duration's form
// without its zero minutes and seconds.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
