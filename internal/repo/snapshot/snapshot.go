// Package snapshot defines the record of one backup run: when, of what,
// from where, and the root tree. Snapshots are immutable objects stored
// under snapshots/<id>, where the id is the SHA-256 of the stored bytes;
// there is no mutable "latest" pointer (latest is computed from the list).
package snapshot

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// ErrCorrupt means a snapshot could not be decoded.
var ErrCorrupt = errors.New("corrupt snapshot")

// Summary counts what a backup did.
type Summary struct {
	FilesNew        int64   `json:"files_new"`
	FilesChanged    int64   `json:"files_changed"`
	FilesUnmodified int64   `json:"files_unmodified"`
	FilesRemoved    int64   `json:"files_removed"`
	DirsNew         int64   `json:"dirs_new"`
	DirsChanged     int64   `json:"dirs_changed"`
	DirsUnmodified  int64   `json:"dirs_unmodified"`
	FilesTotal      int64   `json:"files_total"`
	BytesTotal      int64   `json:"bytes_total"`
	BytesRead       int64   `json:"bytes_read"`
	BlobsAdded      int64   `json:"blobs_added"`
	BytesAdded      int64   `json:"bytes_added"` // stored (compressed, sealed) bytes uploaded
	Errors          int64   `json:"errors"`
	DurationSeconds float64 `json:"duration_seconds"`
}

// ExcludeSet records the exclude rules a backup ran with.
type ExcludeSet struct {
	// Patterns are the gitignore-syntax patterns, in order (blank and
	// comment lines of exclude files left out).
	Patterns []string `json:"patterns,omitempty"`
	// IfPresent are the names whose presence left a directory out.
	IfPresent []string `json:"if_present,omitempty"`
	// Caches: directories tagged with CACHEDIR.TAG were left out.
	Caches bool `json:"caches,omitempty"`
	// LargerThan: regular files of more bytes were left out (0: none).
	LargerThan int64 `json:"larger_than,omitempty"`
	// OneFileSystem: directories on other devices were kept empty.
	OneFileSystem bool `json:"one_file_system,omitempty"`
}

// Snapshot is one backup.
type Snapshot struct {
	Time time.Time `json:"time"`
	Tree id.ID     `json:"tree"`
	// Root is the metadata of the source directory itself (mode, owner,
	// times, xattrs); its entries are in Tree. Nil in snapshots of older
	// versions of this program.
	Root     *tree.Node `json:"root,omitempty"`
	Source   string     `json:"source"` // e.g. "local:/home/me/Documents"
	Hostname string     `json:"hostname"`
	Username string     `json:"username,omitempty"`
	Path     string     `json:"path"` // absolute source path
	// Paths are the roots of a backup of several files and directories,
	// sorted: Tree then holds each under its absolute path, Path is "/".
	// Empty for a backup of one directory, whose entries Tree holds.
	Paths   []string `json:"paths,omitempty"`
	Tags    []string `json:"tags,omitempty"`
	Parent  id.ID    `json:"parent,omitzero"`
	Summary Summary  `json:"summary"`
	Program string   `json:"program,omitempty"`
	// Excludes are the rules that left entries out of this backup; nil
	// when there were none, and in snapshots of older versions.
	Excludes *ExcludeSet `json:"excludes,omitempty"`
	// Original is the id the backup first had, when this object replaced
	// it (tag rewrites a snapshot under a new id): copy and find tell the
	// same backup by it. Zero in snapshots never rewritten; kept across
	// later rewrites.
	Original id.ID `json:"original,omitzero"`
	// Volume identifies the drive the source is on, when it is a portable
	// one (or -volume-uuid named it): its snapshots from any machine and
	// mount point are one group. Nil otherwise, and in older snapshots.
	Volume *Volume `json:"volume,omitempty"`
	// Cloud identifies the cloud drive folder backed up, and holds the
	// drive's change token for the next incremental backup; nil for other
	// sources and in older snapshots.
	Cloud *Cloud `json:"cloud,omitempty"`
	// Nonce makes two otherwise identical snapshots distinct objects.
	Nonce []byte `json:"nonce"`
}

// Volume is the machine-independent location of a snapshot's source.
type Volume struct {
	// UUID is the GPT partition UUID or the file system UUID, or what
	// -volume-uuid gave.
	UUID string `json:"uuid"`
	// Path is the source's path from the root of the volume's file system.
	Path string `json:"path"`
}

// Cloud is the source record of a snapshot of a cloud drive. Its drive
// and root folder ids, not the folder's path, are the snapshot's identity:
// a renamed or moved root folder keeps its backups' lineage.
type Cloud struct {
	// Provider is "google" or "onedrive".
	Provider string `json:"provider"`
	// Type is the source type as given: gdrive, gdrive-changes,
	// onedrive or onedrive-changes.
	Type string `json:"type"`
	// Account is the signed-in user (an e-mail address or user principal
	// name), as the drive tells it.
	Account string `json:"account,omitempty"`
	// DriveID is the drive's id (a shared drive's, or the user's own).
	DriveID string `json:"drive_id"`
	// RootID is the id of the folder backed up.
	RootID string `json:"root_id"`
	// ChangeToken is where the drive's change feed stood when the listing
	// of this backup began (Drive's page token, Graph's delta link): the
	// next backup of a -changes source reads the changes since. Empty for
	// full-scan sources.
	ChangeToken string `json:"change_token,omitempty"`
}

// OriginalID is the id the backup was first stored under: Original, or
// sid when the snapshot was never rewritten.
func (s *Snapshot) OriginalID(sid id.ID) id.ID {
	if s.Original.IsZero() {
		return sid
	}
	return s.Original
}

// WithID is a snapshot and the id it is stored under.
type WithID struct {
	ID id.ID
	*Snapshot
}

// Encode serialises the snapshot.
func Encode(s *Snapshot) ([]byte, error) { return json.Marshal(s) }

// Decode parses a snapshot.
func Decode(data []byte) (*Snapshot, error) {
	var s Snapshot
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if s.Tree.IsZero() {
		return nil, fmt.Errorf("%w: no root tree", ErrCorrupt)
	}
	if s.Cloud != nil && (s.Cloud.DriveID == "" || s.Cloud.RootID == "") {
		return nil, fmt.Errorf("%w: a cloud source without its drive or root folder id", ErrCorrupt)
	}
	if s.Volume != nil && s.Volume.UUID == "" {
		return nil, fmt.Errorf("%w: a volume without a UUID", ErrCorrupt)
	}
	return &s, nil
}

// Group is the identity "latest" is computed within: the same source (and
// the same roots) on the same host, the same path on the same volume from
// any host and mount point, or the same cloud drive folder from anywhere.
func (s *Snapshot) Group() string {
	if s.Cloud != nil {
		// Any host, any path: the folder is the same by its ids.
		return "cloud\x00" + s.Cloud.Provider + "\x00" + s.Cloud.DriveID + "\x00" + s.Cloud.RootID
	}
	if s.Volume != nil {
		return "volume\x00" + s.Volume.UUID + "\x00" + s.Volume.Path + "\x00" + strings.Join(s.Paths, "\x00")
	}
	return s.HostGroup()
}

// HostGroup is Group without the volume: how snapshots were grouped
// before volumes were recorded.
func (s *Snapshot) HostGroup() string {
	return s.Source + "\x00" + strings.Join(s.Paths, "\x00") + "\x00" + s.Hostname
}

// SortByTime orders snapshots oldest first (ties by id, so the order is total).
func SortByTime(list []WithID) {
	sort.Slice(list, func(i, j int) bool {
		if !list[i].Time.Equal(list[j].Time) {
			return list[i].Time.Before(list[j].Time)
		}
		return string(list[i].ID[:]) < string(list[j].ID[:])
	})
}
