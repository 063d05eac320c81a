//go:build !linux

package restore

import "os"

// preallocate does nothing: fallocate is Linux's, and the writes allocate
// the blocks anyway (macOS's F_PREALLOCATE and Windows's
// SetFileInformationByHandle(FileAllocationInfo) would only save extents).
func preallocate(*os.File, int64) error { return nil }
