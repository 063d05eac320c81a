package tree

import (
	"bytes"
	"slices"

	"github.com/cloudstic/cloudstic/internal/repo/id"
)

// Type is the kind of a file-system entry.
type Type string

// The entry kinds a tree records.
const (
	TypeFile    Type = "file"
	TypeDir     Type = "dir"
	TypeSymlink Type = "symlink"
	TypeFIFO    Type = "fifo"
	TypeCharDev Type = "chardev"
	TypeBlkDev  Type = "blockdev"
	TypeSocket  Type = "socket"
)

// Xattr is one extended attribute.
type Xattr struct {
	Name  string `json:"name"`
	Value []byte `json:"value"`
}

// Node is one entry of a directory: its metadata and, for a regular file,
// the ids of its content blobs in order, or, for a directory, the id of its
// own tree blob. Names and link targets may hold any bytes but "/" and NUL;
// the encoder keeps non-UTF-8 ones intact.
type Node struct {
	Name string `json:"name"`
	Type Type   `json:"type"`
	// Mode holds the permission bits plus setuid, setgid and sticky
	// (the low 12 bits of st_mode).
	Mode uint32 `json:"mode"`
	Size uint64 `json:"size,omitempty"`
	// Times are Unix nanoseconds.
	MTime int64 `json:"mtime"`
	CTime int64 `json:"ctime,omitempty"`
	// BirthTime is the creation time where the file system keeps one and
	// the platform gives it cheaply (macOS, FreeBSD, Windows); 0 when not
	// recorded.
	BirthTime int64 `json:"btime,omitempty"`
	// Device and Inode identify the source file (incremental backups and
	// hard-link groups: entries sharing Device+Inode with Links > 1 are
	// restored as hard links of one another).
	Device uint64 `json:"dev,omitempty"`
	Inode  uint64 `json:"ino,omitempty"`
	Links  uint64 `json:"links,omitempty"`
	UID    uint32 `json:"uid"`
	GID    uint32 `json:"gid"`
	User   string `json:"user,omitempty"`
	Group  string `json:"group,omitempty"`
	// LinkTarget is a symlink's target, stored as is (never resolved).
	LinkTarget string `json:"target,omitempty"`
	// Rdev is the device number of a character or block device.
	Rdev uint64 `json:"rdev,omitempty"`
	// Flags are the file's inode flags (Linux chattr: FS_IOC_GETFLAGS),
	// the ones a user may change: immutable, append-only, nodump, noatime
	// and the like (see fsmeta.UserFlags). Zero when none or not recorded.
	Flags uint32 `json:"flags,omitempty"`
	// BSDFlags are the file's chflags flags (st_flags on macOS and
	// FreeBSD) the owner may change: UF_NODUMP, UF_IMMUTABLE, UF_APPEND,
	// UF_OPAQUE, UF_HIDDEN and the like (see fsmeta.UserBSDFlags). Zero
	// when none or not recorded.
	BSDFlags uint32 `json:"bsdflags,omitempty"`
	// WinAttrs are the file's Windows attributes (FILE_ATTRIBUTE_*) that
	// describe it rather than its storage: read-only, hidden, system,
	// archive, not-content-indexed (see fsmeta.WinAttrMask). Zero when
	// none or not recorded.
	WinAttrs uint32 `json:"winattrs,omitempty"`
	// SDDL is the file's Windows security descriptor in SDDL form (owner,
	// group, DACL and, when the backup could read it, SACL); empty when
	// not recorded. Only a restore on Windows applies it.
	SDDL   string  `json:"sddl,omitempty"`
	Xattrs []Xattr `json:"xattrs,omitempty"`
	// Content lists a regular file's blobs in order.
	Content []id.ID `json:"content,omitempty"`
	// Subtree is a directory's tree blob.
	Subtree id.ID `json:"subtree,omitzero"`
	// Cloud is what a cloud drive (Google Drive, OneDrive) told of the
	// entry; nil for every other source.
	Cloud *Cloud `json:"cloud,omitempty"`

	// NameRaw and TargetRaw carry Name and LinkTarget when they are not
	// valid UTF-8 (JSON strings cannot); the codec fills and clears them.
	NameRaw   []byte `json:"name_raw,omitempty"`
	TargetRaw []byte `json:"target_raw,omitempty"`
}

// Equal reports whether n and o encode to the same bytes (Encode is
// deterministic), so that a directory whose entries all equal the previous
// snapshot's can keep its tree. It is exact field by field: slices that are
// omitted when empty compare nil and empty as equal, an attribute value
// (always encoded) does not. TestNodeEqualCoversEveryField fails when a
// field is added to Node but not here.
func (n *Node) Equal(o *Node) bool {
	return n.Name == o.Name && n.Type == o.Type && n.Mode == o.Mode && n.Size == o.Size &&
		n.MTime == o.MTime && n.CTime == o.CTime && n.BirthTime == o.BirthTime && n.Device == o.Device && n.Inode == o.Inode &&
		n.Links == o.Links && n.UID == o.UID && n.GID == o.GID && n.User == o.User && n.Group == o.Group &&
		n.LinkTarget == o.LinkTarget && n.Rdev == o.Rdev && n.Flags == o.Flags &&
		n.BSDFlags == o.BSDFlags && n.WinAttrs == o.WinAttrs && n.SDDL == o.SDDL && n.Subtree == o.Subtree &&
		slices.Equal(n.Content, o.Content) && n.Cloud.Equal(o.Cloud) && bytes.Equal(n.NameRaw, o.NameRaw) &&
		bytes.Equal(n.TargetRaw, o.TargetRaw) &&
		slices.EqualFunc(n.Xattrs, o.Xattrs, func(a, b Xattr) bool {
			return a.Name == b.Name && (a.Value == nil) == (b.Value == nil) && bytes.Equal(a.Value, b.Value)
		})
}

// Cloud is a cloud drive's record of an entry: enough to tell, without
// downloading it, whether a file changed, and for the next incremental
// backup to rebuild the drive's tree from this snapshot plus the drive's
// change feed.
type Cloud struct {
	// ID is the drive's id of the item (stable across renames and moves).
	ID string `json:"id"`
	// Name is the drive's own name of the item when Node.Name differs
	// from it: a name no file system takes ("a/b"), one of several items
	// of one name in a folder, or a document stored in an export format.
	Name string `json:"name,omitempty"`
	// Hash is the drive's checksum of the content, "sha256:<hex>",
	// "md5:<hex>", "sha1:<hex>" or "quickxor:<base64>"; for an exported
	// document "export:<modified time>", which changes when it is edited.
	Hash string `json:"hash,omitempty"`
	// MIME is the drive's media type of the item where it decides how the
	// item is read (Google documents, shortcuts).
	MIME string `json:"mime,omitempty"`
	// Target is the id a shortcut points to.
	Target string `json:"target,omitempty"`
}

// Equal reports whether c and o record the same (both may be nil).
func (c *Cloud) Equal(o *Cloud) bool {
	if c == nil || o == nil {
		return c == o
	}
	return *c == *o
}
