//go:build windows

package config

import "io/fs"

// othersMayAccess is never anything on Windows: mode bits there do not say
// who may read a file (its ACL does), so profiles.yaml is not judged by
// them.
func othersMayAccess(fs.FileMode) fs.FileMode { return 0 }
