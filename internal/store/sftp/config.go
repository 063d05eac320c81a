package sftp

import (
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/sshconn"
	"github.com/cloudstic/cloudstic/internal/store"
)

// DefaultPort is the SSH port used when Config.Port is zero.
const DefaultPort = sshconn.DefaultPort

// Defaults of Config's reconnect settings: a lost connection whose first
// redial fails is dialled again after nominal waits of 0.5 s, 1 s, 2 s, 4 s
// and 8 s, each drawn between half of it and it (jitter, so that hosts
// that lost the same server do not all dial it again at once), so that a
// server restarting or a network gone for about 8 s (up to 15 s when the
// draws are long) does not fail the command.
const (
	// DefaultReconnectRetries is Config.ReconnectRetries when zero.
	DefaultReconnectRetries = 5
	// DefaultReconnectBackoff is Config.ReconnectBackoff when zero.
	DefaultReconnectBackoff = 500 * time.Millisecond
	// DefaultReconnectTimeout is Config.ReconnectTimeout when zero.
	DefaultReconnectTimeout = 30 * time.Second
)

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
	// Logf, if set, receives debug messages (connects, the SSH
	// library's own lines).
	Logf func(format string, args ...any)
	// Notef, if set, receives the lines that tell how the store rides out
	// a failure, which a user wants to see without debug messages: a
	// connection lost, each failed reconnect attempt and its wait, the
	// reconnect, a read resumed on a new connection. Nil: Logf receives
	// them.
	Notef func(format string, args ...any)
	// ReconnectRetries is how many times a reconnect after a lost
	// connection dials again when its dial failed in a way that may pass
	// (refused, reset, unreachable, timed out; never a rejected login or
	// host key): default DefaultReconnectRetries, negative for none (one
	// dial). A server that stopped answering (store.ErrTimeout from the
	// keepalive) is not reconnected to at all: the operation fails.
	ReconnectRetries int
	// ReconnectBackoff is the nominal wait before the first of those
	// retries, doubled before each next one (default
	// DefaultReconnectBackoff). Each wait taken is drawn at random
	// between half the nominal one and the nominal one (see
	// store.Backoff).
	ReconnectBackoff time.Duration
	// ReconnectTimeout bounds a reconnect's retries: none starts when its
	// wait would end more than ReconnectTimeout after the first dial
	// began, so a reconnect takes at most ReconnectTimeout plus one
	// ConnectTimeout (default DefaultReconnectTimeout).
	ReconnectTimeout time.Duration
	// Clock times the waits between reconnect attempts (default
	// clock.Real); tests pass one whose waits they control.
	Clock clock.Clock
	// jitter is the random source of the reconnect waits
	// (store.Backoff.Rand; nil: math/rand/v2): tests set it for exact
	// waits.
	jitter func() float64
}

// withDefaults fills in Port, the timeouts and the reconnect settings.
func (c Config) withDefaults() Config {
	if c.ReconnectRetries == 0 {
		c.ReconnectRetries = DefaultReconnectRetries
	}
	if c.ReconnectBackoff <= 0 {
		c.ReconnectBackoff = DefaultReconnectBackoff
	}
	if c.ReconnectTimeout <= 0 {
		c.ReconnectTimeout = DefaultReconnectTimeout
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
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
