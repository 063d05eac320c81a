//go:build linux || freebsd

package mount

import (
	"fmt"
	"os"
)

// DevFuse is the FUSE device the kernel offers.
const DevFuse = "/dev/fuse"

// CheckDevice reports ErrNoFuse unless dev is a character device.
func CheckDevice(dev string) error {
	fi, err := os.Stat(dev)
	if err != nil {
		return fmt.Errorf("%w: %w (load the fuse kernel module, or give a container --device /dev/fuse)", ErrNoFuse, err)
	}
	if fi.Mode()&os.ModeCharDevice == 0 {
		return fmt.Errorf("%w: %s is not a character device", ErrNoFuse, dev)
	}
	return nil
}
