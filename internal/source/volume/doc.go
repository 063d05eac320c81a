// Package volume tells which volume (partition or file system) a local
// path is on, by an identity that does not depend on the machine: the GPT
// partition UUID, else the file system UUID. A portable drive backed up
// from two machines, mounted at different places, has the same identity
// on both, and the path of the source below the volume's root.
//
// The UUIDs come from udev's /dev/disk/by-partuuid and /dev/disk/by-uuid
// links when they exist; without udev (containers, minimal systems) from
// blkid's low-level probe of the device (util-linux), which needs read
// access to it. Only Linux is supported: elsewhere Locate and UUID report
// ErrUnsupported.
//
// Discover lists the local file systems a backup could start from (source
// discover, setup workstation): from mountinfo, udev and sysfs on Linux,
// getfsstat on macOS and FreeBSD, the drive letters on Windows.
package volume
