// Package sshconn opens SFTP sessions over SSH for the SFTP store
// (internal/store/sftp) and the SFTP source (internal/source/sftp), so that
// both log in and check host keys the same way.
//
// Authentication: an unencrypted private key file, a password, or the keys
// of a running ssh-agent, in that order of preference. The server's host
// key is checked against a known_hosts file (ErrUnknownHostKey,
// ErrHostKeyMismatch) unless the caller opts out.
//
// URLs: "sftp://[user@]host[:port]/path", where the path is absolute on the
// server, as Cloudstic's guide and the IETF SFTP URI draft read it:
// "sftp://host/srv/backups" is /srv/backups. "sftp://host/~/backups" is
// backups under the login directory, and "sftp://host" (or
// "sftp://host/~") the login directory itself. Passwords are not accepted
// in URLs.
//
// The package imports nothing of the repository, stores, sources or the
// engine.
package sshconn
