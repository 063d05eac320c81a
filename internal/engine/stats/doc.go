// Package stats measures snapshots from their trees and the index, without
// reading file data: logical (restore) size, unique contents, stored size,
// blobs per file, and the repository's growth snapshot by snapshot.
package stats
