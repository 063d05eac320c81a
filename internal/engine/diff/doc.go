// Package diff compares the trees of two snapshots: what was added,
// removed, modified or changed only in its metadata, in path order,
// without loading subtrees the two snapshots share. The `diff` command and
// the web dashboard both use it.
package diff
