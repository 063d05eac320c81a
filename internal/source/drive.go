package source

import (
	"context"
	"errors"
)

// ErrTokenExpired means a drive no longer accepts a change token (Drive's
// page token, Graph's delta link: 410 Gone): the changes since cannot be
// read, and the tree is listed whole instead.
var ErrTokenExpired = errors.New("change token no longer accepted")

// Drive is a Source whose tree lives in a remote service with ids, change
// feeds and checksums (Google Drive, OneDrive). After Root, the backup
// reads Identity to find the parent snapshot, then calls Scan once before
// it walks the tree with the Source methods, which then answer from what
// Scan listed.
type Drive interface {
	Source
	// Identity tells which drive folder Root resolved, as snapshots
	// record it.
	Identity() Identity
	// Scan lists the tree below the root. With since (the parent
	// snapshot's change token and items) and a -changes source, only the
	// drive's changes since the token are read and applied to since's
	// items; a token the drive no longer accepts, or items that cannot
	// stand for the drive (see Since), make it list the whole tree and say
	// why in ScanResult.FullScanReason.
	Scan(ctx context.Context, since *Since) (ScanResult, error)
}

// Identity names a cloud drive folder by its ids: the same folder keeps
// them when renamed or moved.
type Identity struct {
	// Provider is "google" or "onedrive".
	Provider string
	// Type is the source type: gdrive, gdrive-changes, onedrive or
	// onedrive-changes.
	Type string
	// Account is the signed-in user, as the drive tells it.
	Account string
	// DriveID and RootID are the drive's and the root folder's ids.
	DriveID, RootID string
	// Changes: the source reads the change feed when it can.
	Changes bool
}

// Since is what an incremental scan starts from: a backup's change token
// and the items that backup stored.
type Since struct {
	Token string
	Items []Item
}

// ScanResult is what a scan found out besides the tree.
type ScanResult struct {
	// Token is where the drive's change feed stood when the listing
	// began (for the next backup); empty for full-scan sources.
	Token string
	// Changes is how many changes an incremental scan read (-1: it listed
	// the whole tree).
	Changes int
	// FullScanReason, when set, says why a scan asked for the changes
	// since a token listed the whole tree instead (the token expired).
	FullScanReason error
}

// Item is one file, folder or shortcut of a drive, as a drive lists it and
// as a snapshot's tree records it (tree.Cloud plus the node's metadata).
type Item struct {
	ID, ParentID string
	// Name is the drive's name of the item (any characters, not unique
	// in its folder).
	Name string
	Dir  bool
	// MIME is the drive's media type where it matters (Google documents,
	// shortcuts); Target is a shortcut's target id.
	MIME, Target string
	// Hash is the drive's checksum of the content (see tree.Cloud.Hash).
	Hash string
	Size int64
	// MTime is the modification time in Unix nanoseconds.
	MTime int64
}
