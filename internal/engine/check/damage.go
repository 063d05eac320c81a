package check

import (
	"strings"

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
// a damaged index file, that file may be the one naming it.
func unindexedNote(damagedIndex bool) string {
	if damagedIndex {
		return "pack is in no readable index: a damaged index file may name it (" + repairIndexHint + ")"
	}
	return "pack is in no index: unreferenced leftover of an interrupted backup or prune (prune removes it)"
}
