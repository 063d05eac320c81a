package sftp

import (
	"errors"

	"github.com/cloudstic/cloudstic/internal/sshconn"
)

// Sentinel errors of this package, wrapped with %w; test with errors.Is.
// Those of the connection are sshconn's.
var (
	// ErrUnknownHostKey is sshconn.ErrUnknownHostKey.
	ErrUnknownHostKey = sshconn.ErrUnknownHostKey
	// ErrHostKeyMismatch is sshconn.ErrHostKeyMismatch.
	ErrHostKeyMismatch = sshconn.ErrHostKeyMismatch
	// ErrAuthFailed is sshconn.ErrAuthFailed.
	ErrAuthFailed = sshconn.ErrAuthFailed
	// ErrNoUser is sshconn.ErrNoUser.
	ErrNoUser = sshconn.ErrNoUser
	// ErrNoCredentials is sshconn.ErrNoCredentials.
	ErrNoCredentials = sshconn.ErrNoCredentials
	// ErrEncryptedKey is sshconn.ErrEncryptedKey.
	ErrEncryptedKey = sshconn.ErrEncryptedKey
	// ErrNoRepositoryDir: the remote directory does not exist (and
	// Config.CreateDir was not set).
	ErrNoRepositoryDir = errors.New("remote repository directory does not exist")
	// ErrClosed: the store was used after Close.
	ErrClosed = errors.New("sftp store is closed")
)

// isNotExist is sshconn.IsNotExist.
func isNotExist(err error) bool { return sshconn.IsNotExist(err) }
