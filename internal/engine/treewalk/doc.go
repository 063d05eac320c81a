// Package treewalk walks and resolves paths in a snapshot's trees, reading
// tree blobs only: the shared read path of ls, find, dump, stats and mount.
//
// Snapshots are directed acyclic graphs of trees, not trees: a directory
// entry names its tree by content, so identical directories share one, and
// a crafted snapshot can share trees so that walking it would meet 2^40
// entries, or nest directories a hundred thousand levels deep. A Measurer
// reads each tree once and refuses what breaks the bounds of
// internal/repo/tree (MaxDepth, MaxEntries) before a walk expands it, and
// walks keep explicit stacks instead of recursing.
package treewalk
