package mount

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// DevFuse is, on macOS, macFUSE's mount helper: go-fuse mounts through it
// (macFUSE creates its /dev/macfuse devices on demand, so there is no
// device to look for beforehand).
const DevFuse = "/Library/Filesystems/macfuse.fs/Contents/Resources/mount_macfuse"

// CheckDevice reports ErrNoFuse unless dev (DevFuse) is installed.
func CheckDevice(dev string) error {
	fi, err := os.Stat(dev)
	if err != nil {
		return fmt.Errorf("%w: %w (install macFUSE: brew install --cask macfuse)", ErrNoFuse, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: %s is not macFUSE's mount helper", ErrNoFuse, dev)
	}
	return nil
}

// errNoAttr is what getxattr says of an attribute that is not there.
const errNoAttr = syscall.ENOATTR

// lazyUnmount: macOS has no lazy detach; a forced unmount is the last
// resort.
const lazyUnmount = unix.MNT_FORCE
