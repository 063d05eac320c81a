//go:build unix

package restore

import "os"

// hostProbe looks at the file system (probeNames): a Unix file system may
// compare names without case or normalization (macOS's APFS and HFS+,
// SMB, exFAT and vfat mounts, ext4 and f2fs casefold directories),
// whatever the host.
type hostProbe struct{}

func (hostProbe) folding(dir *os.Root) (nameFolding, error) { return probeNames(dir) }
