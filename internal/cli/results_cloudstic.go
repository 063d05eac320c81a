package cli

import (
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/check"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/engine/prune"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
)

// Cloudstic's -json documents are its Go result types without tags, so
// their fields carry Go's names (BytesReclaimed, SnapshotsChecked...). The
// documents below hold those fields, under those names and with Cloudstic's
// meaning, beside ours, so a script that reads Cloudstic's keeps working;
// docs/cli.md marks them.

// pruneDoc is prune -json (and forget's "prune"): our result and
// Cloudstic's PruneResult fields.
type pruneDoc struct {
	*prune.Result
	CSBytesReclaimed int64 `json:"BytesReclaimed"`
	CSDryRun         bool  `json:"DryRun"`
	CSObjectsDeleted int   `json:"ObjectsDeleted"`
	CSObjectsScanned int   `json:"ObjectsScanned"`
}

// newPruneDoc fills Cloudstic's fields from res (nil stays nil). An object
// is a pack or an index file, as prune's text says.
func newPruneDoc(res *prune.Result) *pruneDoc {
	if res == nil {
		return nil
	}
	return &pruneDoc{Result: res, CSBytesReclaimed: res.BytesReclaimed, CSDryRun: res.DryRun,
		CSObjectsDeleted: objectsDeleted(res), CSObjectsScanned: res.PacksScanned + res.IndexFilesScanned}
}

// objectsDeleted counts the packs and index files prune deleted, or would
// delete on a dry run.
func objectsDeleted(res *prune.Result) int {
	if res.DryRun {
		return len(res.WouldDelete)
	}
	return res.PacksDeleted + res.PacksRepacked + res.IndexFilesDeleted
}

// checkError is one element of Cloudstic's check "Errors".
type checkError struct {
	Key     string `json:"Key"`
	Message string `json:"Message"`
	Type    string `json:"Type"`
}

// checkDoc is check -json: ours, and Cloudstic's CheckResult fields.
type checkDoc struct {
	checkResult
	CSErrors           []checkError `json:"Errors"`
	CSObjectsVerified  int          `json:"ObjectsVerified"`
	CSSnapshotsChecked int          `json:"SnapshotsChecked"`
}

func newCheckDoc(res *check.Result) checkDoc {
	errs := []checkError{}
	for _, p := range res.Errors {
		errs = append(errs, checkError{Key: p.Key, Message: p.Message, Type: p.Kind})
	}
	return checkDoc{checkResult: checkResult{OK: res.OK(), Result: res}, CSErrors: errs,
		CSObjectsVerified: res.Trees + res.Blobs, CSSnapshotsChecked: res.Snapshots}
}

// diffChangeCS is one element of Cloudstic's diff "Changes": the letter
// diff prints (A, M, D) and the path.
type diffChangeCS struct {
	Path string `json:"Path"`
	Type string `json:"Type"`
}

// diffLetter is the letter diff prints for a change: A, D, or M (a change
// of metadata only is an M too, as in Cloudstic).
func diffLetter(change string) string {
	switch change {
	case operation.DiffAdded:
		return "A"
	case operation.DiffRemoved:
		return "D"
	}
	return "M"
}

// diffCSChanges are Cloudstic's "Changes" of changes.
func diffCSChanges(changes []diffChange) []diffChangeCS {
	out := []diffChangeCS{}
	for _, c := range changes {
		out = append(out, diffChangeCS{Path: c.Path, Type: diffLetter(c.Change)})
	}
	return out
}

// listSnapCS is a list -json entry's "Snap": the fields of Cloudstic's
// snapshot object that mean the same here, under its names. Root names
// the tree as cat does ("tree/ID"); Cloudstic's version, meta and change
// token have no counterpart and are left out.
type listSnapCS struct {
	Created string       `json:"created"`
	Root    string       `json:"root"`
	Seq     int          `json:"seq"`
	Source  listSourceCS `json:"source"`
	Tags    []string     `json:"tags"`
}

// listSourceCS is Cloudstic's SourceInfo: the source type (the URI's
// scheme), the account (the host that took the snapshot) and the path.
type listSourceCS struct {
	Account string `json:"account"`
	Path    string `json:"path"`
	Type    string `json:"type"`
}

// newListEntry is snapshot s, numbered seq, as list -json prints it.
func newListEntry(seq int, s snapshot.WithID) listEntry {
	tags := nonNil(s.Tags)
	return listEntry{
		CSCreated: s.Time, CSRef: "snapshot/" + s.ID.String(),
		CSSnap: listSnapCS{Created: s.Time.Local().Format(time.RFC3339), Root: "tree/" + s.Tree.String(), Seq: seq,
			Source: listSourceCS{Type: sourceType(s.Source), Account: s.Hostname, Path: s.Path}, Tags: tags},
		Seq: seq, ID: s.ID.String(), Created: s.Time, Source: s.Source, Host: s.Hostname, Path: s.Path, Tags: tags,
		Tree: s.Tree.String(), Summary: s.Summary}
}
