// Package find searches the trees of snapshots for entries by name, path,
// modification time and size. It reads tree blobs only, never file data.
package find
