// Package sftp is the source.Source of a directory tree on an SFTP server
// (OpenSSH's sftp-server or internal-sftp), over one SSH connection opened
// by package sshconn: the same logins and host-key checks as the SFTP
// store.
//
// What SFTP version 3 tells of an entry is its type, permission bits
// (setuid, setgid and sticky included), size, owner ids and modification
// time in whole seconds: no change time, inode, device, link count,
// owner names or extended attributes. So the incremental backup of an
// SFTP source trusts size and mtime alone, and TimeGranularity is a
// second.
//
// The connection is not re-dialled: once it drops, every call fails with
// source.ErrLost, and the backup stops without writing a snapshot.
package sftp
