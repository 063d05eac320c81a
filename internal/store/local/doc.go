// Package local implements store.Store on a local (or NFS-mounted) directory.
//
// Every write goes to a uniquely named temporary file in the target's
// directory, is fsynced, and is then moved into place, so readers never see a
// partial object and concurrent writers never share a temp file:
//   - plain Put: rename(2), which replaces atomically (Windows:
//     MoveFileExW with MOVEFILE_REPLACE_EXISTING);
//   - create-if-absent: link(2), which fails atomically if the key exists
//     (also on NFS, unlike O_EXCL on old clients); Windows: MoveFileExW
//     without MOVEFILE_REPLACE_EXISTING, which fails the same way;
//   - compare-and-swap: under an exclusive lock on the store's ".cas.lock"
//     file (flock(2); Windows: LockFileEx), the current version is compared
//     and the temp file renamed into place.
//
// The platform's half of each of these lives in files_unix.go and
// files_windows.go; opening an object without following a link in
// open_unix.go and open_windows.go. Large objects are written with
// O_DIRECT on Linux only (direct_linux.go).
//
// An object's Version is derived from its inode, mtime and size (plus a
// hash of the content for small objects): every write creates a new file,
// so every write gets a new version. List gives the version without the
// hash, so that a listing reads no object; compare-and-swap takes the
// version from Put or Stat.
package local
