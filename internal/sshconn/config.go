package sshconn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Defaults of Config.
const (
	// DefaultPort is the SSH port used when Config.Port is zero.
	DefaultPort = 22
	// DefaultConnectTimeout bounds the TCP connect plus the SSH
	// handshake when Config.ConnectTimeout is zero.
	DefaultConnectTimeout = 10 * time.Second
	// DefaultResponseTimeout is Config.ResponseTimeout when zero.
	DefaultResponseTimeout = 30 * time.Second
)

// Config says which server to reach and how to log in.
type Config struct {
	// User is the login name (required; the command line defaults it to
	// $USER).
	User string
	// Host is the server's name or IP address.
	Host string
	// Port is the SSH port; zero means DefaultPort.
	Port int
	// KeyFile is an unencrypted private key file.
	KeyFile string
	// Password is the login password.
	Password string
	// KnownHostsFile lists the trusted host keys (the command line
	// defaults it to ~/.ssh/known_hosts). Empty or missing: no host is
	// known, so only InsecureIgnoreHostKey connects.
	KnownHostsFile string
	// AgentSocket is the ssh-agent's socket (the command line passes
	// $SSH_AUTH_SOCK), tried when neither KeyFile nor Password is set;
	// empty: no agent. The package reads no environment of its own.
	AgentSocket string
	// InsecureIgnoreHostKey accepts any host key.
	InsecureIgnoreHostKey bool
	// FlagPrefix names the command-line flags that set the credentials,
	// for the hints of error messages ("-store-sftp" when empty: the
	// key is -store-sftp-key).
	FlagPrefix string
	// ConnectTimeout bounds the TCP connect plus the SSH handshake
	// (default DefaultConnectTimeout).
	ConnectTimeout time.Duration
	// ResponseTimeout bounds the wait for the server's answer to a
	// keepalive sent every third of ResponseTimeout while connected
	// (default DefaultResponseTimeout): a server that stops answering has
	// its connection closed, failing the requests in flight, and
	// Conn.TimedOut reports it.
	ResponseTimeout time.Duration
	// DialContext, when set, opens the TCP connection instead of a
	// net.Dialer (tests wrap the connection to inject faults).
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	// Debugf, if set, receives debug messages (a keepalive unanswered).
	Debugf func(format string, args ...any)
}

// withDefaults fills in the timeouts.
func (c Config) withDefaults() Config {
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	if c.ResponseTimeout <= 0 {
		c.ResponseTimeout = DefaultResponseTimeout
	}
	return c
}

// Addr returns "host:port", with DefaultPort when Port is zero.
func (c Config) Addr() string {
	port := c.Port
	if port == 0 {
		port = DefaultPort
	}
	return net.JoinHostPort(c.Host, strconv.Itoa(port))
}

// flag names the credential flag called name ("key", "password").
func (c Config) flag(name string) string {
	prefix := c.FlagPrefix
	if prefix == "" {
		prefix = "-store-sftp"
	}
	return prefix + "-" + name
}

// Check reports a Config that cannot connect: an invalid host or no user.
func (c Config) Check() error {
	if err := checkHost(c.Host); err != nil {
		return err
	}
	if c.User == "" {
		return fmt.Errorf("%w: give one in the URL, sftp://user@host/path", ErrNoUser)
	}
	return nil
}

// URL formats "sftp://user@host:port" and path as ParseURL reads it: an
// absolute path as it is, a relative one (under the login directory)
// after "/~/", and the login directory itself ("") as no path. The user
// and port appear only when set.
func (c Config) URL(path string) string {
	u := url.URL{Scheme: "sftp", Host: c.Host}
	if c.Port != 0 {
		u.Host = net.JoinHostPort(c.Host, strconv.Itoa(c.Port))
	} else if strings.Contains(c.Host, ":") {
		u.Host = "[" + c.Host + "]"
	}
	if c.User != "" {
		u.User = url.User(c.User)
	}
	switch {
	case strings.HasPrefix(path, "/"):
		u.Path = path
	case path != "":
		u.Path = "/~/" + path
	}
	return u.String()
}

// ParseURL parses "sftp://[user@]host[:port]/path" into the server's
// address and the path on it: absolute ("sftp://h/srv/backups" is
// "/srv/backups"), or relative to the login directory when the URL's path
// starts with "/~/" ("sftp://h/~/backups" is "backups"). "sftp://h" and
// "sftp://h/~" give "", the login directory. Passwords, queries and
// fragments are rejected. Errors wrap ErrBadURL.
func ParseURL(s string) (Config, string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return Config{}, "", fmt.Errorf("%w: %w", ErrBadURL, err)
	}
	bad := func(format string, args ...any) (Config, string, error) {
		return Config{}, "", fmt.Errorf("%w %q: %s", ErrBadURL, s, fmt.Sprintf(format, args...))
	}
	if u.Scheme != "sftp" {
		return bad("scheme must be sftp")
	}
	if u.Opaque != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return bad("want sftp://[user@]host[:port]/path")
	}
	var cfg Config
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			return bad("give the password with a flag or the environment, not in the URL")
		}
		cfg.User = u.User.Username()
		if cfg.User == "" {
			return bad("empty user name")
		}
	}
	cfg.Host = u.Hostname()
	if err := checkHost(cfg.Host); err != nil {
		return bad("%v", err)
	}
	if strings.Contains(cfg.Host, ":") && !strings.HasPrefix(u.Host, "[") {
		return bad("put an IPv6 address in brackets")
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return bad("invalid port %q", p)
		}
		cfg.Port = n
	} else if strings.HasSuffix(u.Host, ":") {
		return bad("empty port")
	}
	if strings.ContainsRune(u.Path, 0) {
		return bad("NUL in path")
	}
	p := u.Path
	switch {
	case p == "/~":
		p = ""
	case strings.HasPrefix(p, "/~/"):
		p = strings.TrimLeft(p[len("/~/"):], "/")
	}
	return cfg, p, nil
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
