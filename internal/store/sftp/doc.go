// Package sftp implements store.Store on a directory of an SFTP server
// (OpenSSH's sftp-server or internal-sftp), using github.com/pkg/sftp over
// golang.org/x/crypto/ssh.
//
// Connection (package sshconn, shared with the SFTP source): authentication
// by an unencrypted private key file, a password, or the keys of a running
// ssh-agent, in that order of preference; the server's host key is checked
// against a known_hosts file unless the caller opts out. One SSH connection
// carries one SFTP session shared by all goroutines; when it drops, the next
// failing operation dials a new one and runs once more on it. A dial that
// fails in a way that may pass (refused, reset, unreachable, connect
// timeout: a server restarting, a network gone for a moment) is tried again
// after nominal waits of 0.5 s, 1 s, 2 s, 4 s and 8 s by default
// (Config.ReconnectRetries, ReconnectBackoff, ReconnectTimeout), each drawn
// at random between half of it and it, so that hosts that lost the same
// server do not all dial it again at once (store.Backoff); a rejected login
// or host key is not.
// One goroutine dials, without the store's lock: the others that need the
// connection meanwhile wait for its outcome, and Close or the caller's
// context ends the waits at once. A server that stopped answering (the
// keepalive's store.ErrTimeout) is not dialled again by the operation,
// which fails. A stream (OpenRange) whose read fails on a lost connection
// opens its file again on the new connection and goes on at the byte it had
// reached, if the file's size and mtime are unchanged.
//
// Writes never expose a partial object: the data goes to a uniquely named
// temporary file ".tmp-<random hex>" in the key's directory, is fsynced where
// the server supports fsync@openssh.com, and is then moved into place:
//   - plain Put: posix-rename@openssh.com, which replaces atomically
//     (required: Open fails on a server without it);
//   - create-if-absent: hardlink@openssh.com, which fails if the key exists.
//     Capabilities().CreateIfAbsent is true only when the server offers it.
//
// SFTP has no compare-and-swap, so CompareAndSwap is never declared.
// ObjectInfo.Version is "<size hex>-<mtime unix seconds hex>": it tells
// writes apart for caching and messages, not for atomic swaps (SFTP v3
// mtimes have one-second resolution).
//
// URLs: "sftp://[user@]host[:port]/path", read by sshconn.ParseURL: the
// path is absolute on the server ("sftp://host/srv/backups" is
// /srv/backups), and under the login directory after "/~/"
// ("sftp://host/~/backups" is ~/backups). Passwords are not accepted in
// URLs.
package sftp
