// Package treewalk walks and resolves paths in a snapshot's trees, reading
// tree blobs only: the shared read path of find, dump, stats and mount.
package treewalk
