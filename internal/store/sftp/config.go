package sftp

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cloudstic/cloudstic/internal/store"
)

// DefaultPort is the SSH port used when Config.Port is zero.
const DefaultPort = 22

// Config says where the repository is and how to log in.
type Config struct {
	// User is the login name (required; the command line defaults it to
	// $USER).
	User string
	// Host is the server's name or IP address.
	Host string
	// Port is the SSH port; zero means DefaultPort.
	Port int
	// Path is the remote repository directory, absolute or relative to
	// the login directory; empty means the login directory itself.
	Path string
	// KeyFile is an unencrypted private key file (-store-sftp-key).
	KeyFile string
	// Password is the login password (-store-sftp-password).
	Password string
	// KnownHostsFile lists the trusted host keys (the command line
	// defaults it to ~/.ssh/known_hosts). Empty or missing: no host is
	// known, so only InsecureIgnoreHostKey connects.
	KnownHostsFile string
	// AgentSocket is the ssh-agent's socket (the command line passes
	// $SSH_AUTH_SOCK), tried when neither KeyFile nor Password is set;
	// empty: no agent. The package reads no environment of its own.
	AgentSocket string
	// InsecureIgnoreHostKey accepts any host key (-store-sftp-insecure).
	InsecureIgnoreHostKey bool
	// CreateDir makes Open create Path (and its parents) when missing;
	// otherwise a missing Path is ErrNoRepositoryDir.
	CreateDir bool
	// ConnectTimeout bounds the TCP connect plus the SSH handshake
	// (default store.DefaultConnectTimeout).
	ConnectTimeout time.Duration
	// ResponseTimeout bounds the wait for the server's answer to a
	// keepalive sent every ResponseTimeout while connected (default
	// store.DefaultResponseTimeout): a server that stops answering has its
	// connection closed, failing the requests in flight with
	// store.ErrTimeout.
	ResponseTimeout time.Duration
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

// addr returns "host:port".
func (c Config) addr() string {
	return net.JoinHostPort(c.Host, strconv.Itoa(c.Port))
}

// URL formats the configuration as "sftp://user@host:port/path", the
// inverse of ParseURL (an absolute Path gets a double slash). The user and
// port appear only when set.
func (c Config) URL() string {
	u := url.URL{Scheme: "sftp", Host: c.Host}
	if c.Port != 0 {
		u.Host = net.JoinHostPort(c.Host, strconv.Itoa(c.Port))
	} else if strings.Contains(c.Host, ":") {
		u.Host = "[" + c.Host + "]"
	}
	if c.User != "" {
		u.User = url.User(c.User)
	}
	u.Path = "/" + c.Path
	return u.String()
}

// ParseURL parses "sftp://[user@]host[:port]/path". The path after the
// host's slash is relative to the login directory ("sftp://h/backups" is
// ~/backups); a second slash makes it absolute ("sftp://h//srv/backups" is
// /srv/backups). "sftp://h" and "sftp://h/" mean the login directory.
// Passwords, queries and fragments are rejected.
func ParseURL(s string) (Config, error) {
	u, err := url.Parse(s)
	if err != nil {
		return Config{}, fmt.Errorf("sftp URL: %w", err)
	}
	if u.Scheme != "sftp" {
		return Config{}, fmt.Errorf("sftp URL %q: scheme must be sftp", s)
	}
	if u.Opaque != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return Config{}, fmt.Errorf("sftp URL %q: want sftp://[user@]host[:port]/path", s)
	}
	var cfg Config
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			return Config{}, fmt.Errorf("sftp URL %q: give the password with -store-sftp-password, not in the URL", s)
		}
		cfg.User = u.User.Username()
		if cfg.User == "" {
			return Config{}, fmt.Errorf("sftp URL %q: empty user name", s)
		}
	}
	cfg.Host = u.Hostname()
	if err := checkHost(cfg.Host); err != nil {
		return Config{}, fmt.Errorf("sftp URL %q: %w", s, err)
	}
	if strings.Contains(cfg.Host, ":") && !strings.HasPrefix(u.Host, "[") {
		return Config{}, fmt.Errorf("sftp URL %q: put an IPv6 address in brackets", s)
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return Config{}, fmt.Errorf("sftp URL %q: invalid port %q", s, p)
		}
		cfg.Port = n
	} else if strings.HasSuffix(u.Host, ":") {
		return Config{}, fmt.Errorf("sftp URL %q: empty port", s)
	}
	cfg.Path = strings.TrimPrefix(u.Path, "/")
	if strings.ContainsRune(cfg.Path, 0) {
		return Config{}, fmt.Errorf("sftp URL %q: NUL in path", s)
	}
	return cfg, nil
}

// checkHost rejects empty host names and characters no host name or IP
// address contains.
func checkHost(h string) error {
	if h == "" {
		return errors.New("missing host")
	}
	if strings.Contains(h, ":") {
		ip, _, _ := strings.Cut(h, "%") // an IPv6 zone may follow
		if net.ParseIP(ip) == nil {
			return fmt.Errorf("invalid IPv6 address %q", h)
		}
	}
	for _, r := range h {
		ok := r == '.' || r == '-' || r == '_' || r == ':' || r == '%' ||
			('0' <= r && r <= '9') || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z')
		if !ok {
			return fmt.Errorf("invalid host %q", h)
		}
	}
	return nil
}
