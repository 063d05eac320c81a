package sftp

import (
	"github.com/cloudstic/cloudstic/internal/sshconn"
	"github.com/cloudstic/cloudstic/internal/store"
)

// DefaultPort is the SSH port used when Config.Port is zero.
const DefaultPort = sshconn.DefaultPort

// Config says where the repository is and how to log in.
type Config struct {
	// Config is the server and the login: user, host, port, key file,
	// password, known hosts, ssh-agent, and the timeouts: ConnectTimeout
	// (default store.DefaultConnectTimeout) and ResponseTimeout (default
	// store.DefaultResponseTimeout), a keepalive's, after which requests
	// in flight fail with store.ErrTimeout.
	sshconn.Config
	// Path is the remote repository directory, absolute or relative to
	// the login directory; empty means the login directory itself.
	Path string
	// CreateDir makes Open create Path (and its parents) when missing;
	// otherwise a missing Path is ErrNoRepositoryDir.
	CreateDir bool
	// Logf, if set, receives debug messages (connects, reconnects).
	Logf func(format string, args ...any)
}

// withDefaults fills in Port and the timeouts.
func (c Config) withDefaults() Config {
	if c.Port == 0 {
		c.Port = DefaultPort
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = store.DefaultConnectTimeout
	}
	if c.ResponseTimeout <= 0 {
		c.ResponseTimeout = store.DefaultResponseTimeout
	}
	return c
}

// sshConfig is the connection's configuration, with the store's log.
func (c Config) sshConfig() sshconn.Config {
	sc := c.Config
	sc.Debugf = c.Logf
	return sc
}

// URL formats the configuration as "sftp://user@host:port/path", the
// inverse of ParseURL (a path relative to the login directory follows
// "/~/"). The user and port appear only when set.
func (c Config) URL() string { return c.Config.URL(c.Path) }

// ParseURL parses "sftp://[user@]host[:port]/path" (see sshconn.ParseURL):
// the path is absolute on the server, or under the login directory after
// "/~/".
func ParseURL(s string) (Config, error) {
	cfg, p, err := sshconn.ParseURL(s)
	if err != nil {
		return Config{}, err
	}
	return Config{Config: cfg, Path: p}, nil
}
