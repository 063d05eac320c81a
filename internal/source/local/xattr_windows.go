package local

import "github.com/cloudstic/cloudstic/internal/source"

// readXattrs returns none: Windows files have no extended attributes in
// the Unix sense. (NTFS extended attributes and alternate data streams
// exist but are not backed up: see docs/platforms.md.)
func readXattrs(string) ([]source.Xattr, error) { return nil, nil }
