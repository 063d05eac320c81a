package cli

import (
	"fmt"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/termtext"
)

// damagedJSON is one damaged object in a -json document.
type damagedJSON struct {
	Key    string `json:"key"`
	Reason string `json:"reason"`
}

// skippedDamage is the part of a -json document listing the damaged
// snapshots and index files the command skipped (absent when none was).
type skippedDamage struct {
	DamagedIndexFiles []damagedJSON `json:"damaged_index_files,omitempty"`
	DamagedSnapshots  []damagedJSON `json:"damaged_snapshots,omitempty"`
}

// noteDamage is the damage watcher of the repositories the command opens
// (operation.Options.OnDamage): it warns once per damaged snapshot or
// index file skipped, on one line naming it, why, and the repair that
// deals with it, and keeps it for the -json document. repair lists what it
// finds itself, and prune's refusal names it.
func (a *app) noteDamage(d repo.Damaged) {
	a.errMu.Lock()
	defer a.errMu.Unlock()
	a.damaged = append(a.damaged, d)
	if a.cmd != nil && (a.cmd.name == "repair" || a.cmd.name == "prune") {
		return
	}
	what := "the blobs only it names look missing; 'cloudstic repair index' rebuilds the index from the packs"
	if d.IsSnapshot() {
		what = "'cloudstic repair snapshots' removes it"
	}
	repository := ""
	if a.role != "" {
		repository = a.role + "repository: "
	}
	fmt.Fprintln(a.io.Stderr, termtext.Sprintf("warning: %s%s is damaged and was skipped (%s): %s", repository, d.Key, d.Reason(), what))
}

// skipped returns the damaged objects met so far, for -json documents.
func (a *app) skipped() skippedDamage {
	a.errMu.Lock()
	defer a.errMu.Unlock()
	var out skippedDamage
	for _, d := range a.damaged {
		j := damagedJSON{Key: d.Key, Reason: d.Reason()}
		if d.IsSnapshot() {
			out.DamagedSnapshots = append(out.DamagedSnapshots, j)
		} else {
			out.DamagedIndexFiles = append(out.DamagedIndexFiles, j)
		}
	}
	return out
}

// damagedList converts damaged objects for a -json document ([] when
// none).
func damagedList(list []repo.Damaged) []damagedJSON {
	out := []damagedJSON{}
	for _, d := range list {
		out = append(out, damagedJSON{Key: d.Key, Reason: d.Reason()})
	}
	return out
}
