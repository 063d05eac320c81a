// Package local implements store.Store on a local (or NFS-mounted) directory.
//
// Every write goes to a uniquely named temporary file in the target's
// directory, is fsynced, and is then moved into place, so readers never see a
// partial object and concurrent writers never share a temp file:
//   - plain Put: rename(2), which replaces atomically;
//   - create-if-absent: link(2), which fails atomically if the key exists
//     (also on NFS, unlike O_EXCL on old clients);
//   - compare-and-swap: under an flock(2) on the store's ".cas.lock" file,
//     the current version is compared and the temp file renamed into place.
//
// An object's Version is derived from its inode, mtime and size: every write
// creates a new file, so every write gets a new version without hashing.
package local
