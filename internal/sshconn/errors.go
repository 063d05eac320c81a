package sshconn

import (
	"errors"
	"io"
	"io/fs"
	"net"
	"syscall"

	"github.com/pkg/sftp"
)

// Sentinel errors of this package, wrapped with %w; test with errors.Is.
var (
	// ErrUnknownHostKey: the server's host key is not in the known_hosts
	// file. The message names the host, the key's fingerprint and how to
	// add it.
	ErrUnknownHostKey = errors.New("unknown SSH host key")
	// ErrHostKeyMismatch: known_hosts holds a different key for the host
	// (the server was reinstalled, or someone is intercepting the
	// connection).
	ErrHostKeyMismatch = errors.New("SSH host key mismatch")
	// ErrAuthFailed: the server rejected every credential offered.
	ErrAuthFailed = errors.New("SSH authentication failed")
	// ErrNoUser: Config.User is empty.
	ErrNoUser = errors.New("no SSH user name")
	// ErrNoCredentials: no key file, no password and no ssh-agent.
	ErrNoCredentials = errors.New("no SSH credentials")
	// ErrEncryptedKey: the private key file is protected by a passphrase,
	// which this package does not ask for.
	ErrEncryptedKey = errors.New("SSH private key is encrypted")
	// ErrBadURL: an sftp:// URL that does not parse.
	ErrBadURL = errors.New("invalid sftp URL")
	// ErrTimeout: the connection or the handshake took longer than
	// Config.ConnectTimeout.
	ErrTimeout = errors.New("timed out")
)

// IsNotExist reports whether err says the remote file does not exist.
// pkg/sftp maps SSH_FX_NO_SUCH_FILE to os.ErrNotExist in most calls and
// returns the raw status in others.
func IsNotExist(err error) bool {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, sftp.ErrSSHFxNoSuchFile) {
		return true
	}
	var se *sftp.StatusError
	return errors.As(err, &se) && se.FxCode() == sftp.ErrSSHFxNoSuchFile
}

// IsConnLost reports whether err means the SSH connection or the SFTP
// session is gone (as opposed to a failed operation on a live session).
func IsConnLost(err error) bool {
	if err == nil {
		return false
	}
	var se *sftp.StatusError
	if errors.As(err, &se) && se.FxCode() == sftp.ErrSSHFxConnectionLost {
		return true
	}
	return errors.Is(err, sftp.ErrSSHFxConnectionLost) ||
		errors.Is(err, sftp.ErrSSHFxNoConnection) ||
		errors.Is(err, io.EOF) ||
		errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE)
}
