package volume

import (
	"errors"
	"fmt"
)

// ErrNoIdentity means the volume has no UUID that could be read.
var ErrNoIdentity = errors.New("volume has no readable UUID")

// Kind says where a UUID comes from.
type Kind string

// The kinds of UUIDs, in the order they are preferred.
const (
	// PartUUID is a GPT partition's unique GUID.
	PartUUID Kind = "partuuid"
	// FSUUID is the file system's UUID (its superblock's).
	FSUUID Kind = "uuid"
)

// Volume is where a path is.
type Volume struct {
	// Device is the block device's name under /dev, e.g. "sdb1", "loop0".
	Device string
	// MountPoint is where the volume is mounted on this machine.
	MountPoint string
	// Path is the path's location from the root of the volume's file
	// system ("/" for its root): the same on every machine.
	Path string
	// Portable: a removable device, one on a USB or MMC bus, or a loop
	// device (an image file).
	Portable bool
}

// System is where the machine's state is read; tests point it elsewhere.
type System struct {
	Mountinfo string // default /proc/self/mountinfo
	Sys       string // default /sys
	DiskByDir string // default /dev/disk
	// Blkid is the blkid program; "" means "blkid" on $PATH.
	Blkid string
}

// ErrUnsupported means this platform has no way here to tell which volume
// a path is on: only Linux does (mountinfo, sysfs, udev, blkid).
var ErrUnsupported = fmt.Errorf("volume: portable drives are recognised on Linux only: %w", errors.ErrUnsupported)
