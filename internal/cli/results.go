package cli

import (
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/check"
	"github.com/cloudstic/cloudstic/internal/engine/forget"
	"github.com/cloudstic/cloudstic/internal/engine/fsmeta"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// The documents -json prints, one type each, as docs/cli.md's "JSON
// output" section publishes them (json_schema_test.go holds them to it).
// Fields are in the alphabetical order of their JSON names, the order these
// documents had when they were built as maps, so the bytes did not change.

// statsResult is stats -json (without -growth, which prints growthRow).
type statsResult struct {
	CompressionRatio float64 `json:"compression_ratio"`
	skippedDamage
	DedupRatio float64               `json:"dedup_ratio"`
	Mode       string                `json:"mode"`
	SpaceRatio float64               `json:"space_ratio"`
	Totals     operation.StatsTotals `json:"totals"`
}

// errorResult is the document of a failed command.
type errorResult struct {
	Error    string `json:"error"`
	ExitCode int    `json:"exit_code"`
}

// versionResult is version -json.
type versionResult struct {
	Version string `json:"version"`
}

// completionResult is completion -json.
type completionResult struct {
	Script string `json:"script"`
	Shell  string `json:"shell"`
}

// initResult is init -json; RecoveryKey is set with -add-recovery-key.
type initResult struct {
	// AdoptedSlots is set by init -adopt-slots on an existing repository.
	AdoptedSlots bool   `json:"adopted_slots,omitempty"`
	Encrypted    bool   `json:"encrypted"`
	ID           string `json:"id"`
	RecoveryKey  string `json:"recovery_key,omitempty"`
	Store        string `json:"store"`
}

// backupResult is backup -json. A dry run, or an -ignore-empty-snapshot
// run that found nothing changed, has no SnapshotID; a first backup of a
// source has no Parent; Unchanged is set only with -ignore-empty-snapshot.
type backupResult struct {
	skippedDamage
	DryRun     bool             `json:"dry_run"`
	Errors     int              `json:"errors"`
	ErrorPaths []string         `json:"error_paths"` // what Errors counts, by path
	Parent     string           `json:"parent,omitempty"`
	SnapshotID string           `json:"snapshot_id,omitempty"`
	Summary    snapshot.Summary `json:"summary"`
	Unchanged  *bool            `json:"unchanged,omitempty"`
}

// restoreResult is restore -json.
type restoreResult struct {
	Bytes   int64    `json:"bytes"`
	Damaged []string `json:"damaged"`
	skippedDamage
	Deleted     int64    `json:"deleted"`
	DeletePaths []string `json:"delete_paths,omitempty"`
	Dirs        int64    `json:"dirs"`
	DryRun      bool     `json:"dry_run"`
	Files       int64    `json:"files"`
	Format      string   `json:"format"`
	Hardlinks   int64    `json:"hardlinks"`
	Output      string   `json:"output"`
	// Privileged counts what gives privileges when root restores it.
	Privileged   privilegeCountsJSON `json:"privileged"`
	Replaced     int64               `json:"replaced"`
	Skipped      []string            `json:"skipped"`
	SnapshotID   string              `json:"snapshot_id"`
	Symlinks     int64               `json:"symlinks"`
	Unchanged    int64               `json:"unchanged"`
	Verified     int64               `json:"verified"`
	VerifyFailed []string            `json:"verify_failed"`
	// Withheld counts what -no-setuid, -no-devices, -no-capabilities
	// left out.
	Withheld privilegeCountsJSON `json:"withheld"`
}

// privilegeCountsJSON is fsmeta.PrivilegeCounts in restore -json.
type privilegeCountsJSON struct {
	Capabilities int64 `json:"capabilities"`
	DeviceNodes  int64 `json:"device_nodes"`
	SetuidFiles  int64 `json:"setuid_files"`
}

// privilegeCounts converts the engine's counts for -json.
func privilegeCounts(c fsmeta.PrivilegeCounts) privilegeCountsJSON {
	return privilegeCountsJSON{SetuidFiles: c.SetuidFiles, DeviceNodes: c.DeviceNodes, Capabilities: c.Capabilities}
}

// listResult is list -json: Cloudstic's ListResult, whose Snapshots are
// ours (oldest first) with Cloudstic's fields.
type listResult struct {
	Snapshots []listEntry `json:"Snapshots"`
}

// listEntry is one snapshot of list -json: Cloudstic's SnapshotEntry
// fields (Created, Ref, Snap), then ours.
type listEntry struct {
	CSCreated time.Time        `json:"Created"`
	CSRef     string           `json:"Ref"`
	CSSnap    listSnapCS       `json:"Snap"`
	Created   time.Time        `json:"created"`
	Host      string           `json:"host"`
	ID        string           `json:"id"`
	Path      string           `json:"path"`
	Seq       int              `json:"seq"`
	Source    string           `json:"source"`
	Summary   snapshot.Summary `json:"summary"`
	Tags      []string         `json:"tags"`
	Tree      string           `json:"tree"`
}

// lsResult is ls -json.
type lsResult struct {
	skippedDamage
	Entries    []lsEntry `json:"entries"`
	SnapshotID string    `json:"snapshot_id"`
}

// lsEntry is one file of ls -json; Mode is octal, as in "0644".
type lsEntry struct {
	GID    uint32    `json:"gid"`
	Mode   string    `json:"mode"`
	MTime  time.Time `json:"mtime"`
	Path   string    `json:"path"`
	Size   uint64    `json:"size"`
	Target string    `json:"target"`
	Type   tree.Type `json:"type"`
	UID    uint32    `json:"uid"`
}

// diffResult is diff -json.
type diffResult struct {
	Changes []diffChange `json:"changes"`
	// Ref1, Ref2 and CSChanges are Cloudstic's (results_cloudstic.go).
	// CSChanges must follow Changes: Go's decoder matches keys without
	// regard to case, and a script's decoder of Cloudstic's type must end
	// up with the last, Cloudstic's, "Changes".
	CSChanges []diffChangeCS `json:"Changes"`
	Ref1      string         `json:"Ref1"`
	Ref2      string         `json:"Ref2"`
	skippedDamage
	Snapshot1 string      `json:"snapshot1"`
	Snapshot2 string      `json:"snapshot2"`
	Summary   diffSummary `json:"summary"`
}

// catSnapshotResult is cat snapshot ID: the snapshot as stored.
type catSnapshotResult struct {
	ID       string             `json:"id"`
	Snapshot *snapshot.Snapshot `json:"snapshot"`
}

// keyListEntry is one slot of key list -json; Error is set when the slot
// could not be read.
type keyListEntry struct {
	Created   time.Time `json:"created"`
	Error     string    `json:"error,omitempty"`
	ID        string    `json:"id"`
	Kind      string    `json:"kind"`
	KMSKeyARN string    `json:"kms_key_arn,omitempty"`
	Label     string    `json:"label"`
}

// keySlotRef names a key slot.
type keySlotRef struct {
	ID        string `json:"id"`
	Kind      string `json:"kind"`
	KMSKeyARN string `json:"kms_key_arn,omitempty"`
	Label     string `json:"label"`
}

// keyChangeResult is key add, add-recovery, passwd and remove -json:
// exactly one of Added, Changed and Removed is set.
type keyChangeResult struct {
	Added       *keySlotRef `json:"added,omitempty"`
	Changed     *keySlotRef `json:"changed,omitempty"`
	RecoveryKey string      `json:"recovery_key,omitempty"`
	Removed     *keySlotRef `json:"removed,omitempty"`
}

// forgetResult is forget -json; Prune is set with -prune, PruneError
// when the snapshots were removed but the prune step failed.
type forgetResult struct {
	skippedDamage
	DryRun     bool          `json:"dry_run"`
	Groups     []forgetGroup `json:"groups"`
	Prune      *pruneDoc     `json:"prune,omitempty"`
	PruneError string        `json:"prune_error,omitempty"`
	Removed    []string      `json:"removed"`
}

// forgetGroup is one group of snapshots of forget -json.
type forgetGroup struct {
	Key    forget.GroupKey  `json:"group"`
	Keep   []forgetJSONSnap `json:"keep"`
	Remove []forgetJSONSnap `json:"remove"`
}

// checkResult is check -json.
type checkResult struct {
	OK     bool          `json:"ok"`
	Result *check.Result `json:"result"`
}

// tagResult is tag -json.
type tagResult struct {
	Changes []tagJSONChange `json:"changes"`
	skippedDamage
	DryRun    bool `json:"dry_run"`
	Unchanged int  `json:"unchanged"`
}

// tagJSONChange is one element of tag -json's "changes".
type tagJSONChange struct {
	NewID   string   `json:"new_id,omitempty"`
	NewTags []string `json:"new_tags"`
	// OldDeleted is false in a dry run, and when the old object could not
	// be deleted after its replacement was saved (both then exist).
	OldDeleted bool     `json:"old_deleted"`
	OldID      string   `json:"old_id"`
	OldTags    []string `json:"old_tags"`
}

// copyResult is copy -json.
type copyResult struct {
	BlobsAdded int64              `json:"blobs_added"`
	BlobsRead  int64              `json:"blobs_read"`
	BytesAdded int64              `json:"bytes_added"`
	Copied     []copyJSONSnapshot `json:"copied"`
	skippedDamage
	DryRun    bool     `json:"dry_run"`
	Rechunked bool     `json:"rechunked"`
	Skipped   []string `json:"skipped"`
	// The source repository's damaged objects (skippedDamage holds the
	// destination's).
	SourceDamagedIndexFiles []damagedJSON `json:"source_damaged_index_files,omitempty"`
	SourceDamagedSnapshots  []damagedJSON `json:"source_damaged_snapshots,omitempty"`
}

// copyJSONSnapshot is one element of copy -json's "copied".
type copyJSONSnapshot struct {
	Host string `json:"host"`
	// NewID is absent in a dry run.
	NewID    string    `json:"new_id,omitempty"`
	Original string    `json:"original"`
	Path     string    `json:"path"`
	SourceID string    `json:"source_id"`
	Tags     []string  `json:"tags"`
	Time     time.Time `json:"time"`
}

// rewriteResult is rewrite -json.
type rewriteResult struct {
	Changes []rewriteJSONChange `json:"changes"`
	skippedDamage
	DryRun    bool `json:"dry_run"`
	Unchanged int  `json:"unchanged"`
}

// rewriteJSONChange is one element of rewrite -json's "changes".
type rewriteJSONChange struct {
	// NewID is absent in a dry run.
	NewID string `json:"new_id,omitempty"`
	// OldDeleted is false in a dry run, and when the old object could not
	// be deleted after its replacement was saved (both then exist).
	OldDeleted   bool     `json:"old_deleted"`
	OldID        string   `json:"old_id"`
	Removed      []string `json:"removed"`
	RemovedBytes int64    `json:"removed_bytes"`
	RemovedFiles int64    `json:"removed_files"`
}
