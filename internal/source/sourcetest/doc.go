// Package sourcetest is the conformance suite every source.Source must
// pass, as storetest is for stores: run on the local file system, the
// SFTP test server and the fake Google Drive and OneDrive. A test builds
// a tree through its Tree (the file system, or a drive's admin API), and
// the suite reads it back through the source: parents before children,
// entries sorted, unicode and odd names, deep trees, large files read
// twice (Seek), unreadable entries reported per entry; and for drives,
// names Drive allows twice in one folder, and the change feed (create,
// modify, rename, move, delete, an expired token).
package sourcetest
