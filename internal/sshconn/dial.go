package sshconn

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"sync/atomic"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/cloudstic/cloudstic/internal/clock"
)

// Conn is one SSH connection with its SFTP session.
type Conn struct {
	// SSH is the connection, SFTP its session.
	SSH  *ssh.Client
	SFTP *sftp.Client
	// dead is closed when the SSH connection has ended.
	dead   chan struct{}
	closed atomic.Bool
	// timedOut is set when the keepalive watchdog closed the connection
	// because the server stopped answering.
	timedOut atomic.Bool
}

// TimedOut reports whether the keepalive watchdog closed the connection
// because the server stopped answering (see Config.ResponseTimeout).
func (c *Conn) TimedOut() bool { return c.timedOut.Load() }

// Dead is closed when the SSH connection has ended.
func (c *Conn) Dead() <-chan struct{} { return c.dead }

// IsDead reports whether the SSH connection has ended.
func (c *Conn) IsDead() bool {
	select {
	case <-c.dead:
		return true
	default:
		return false
	}
}

// Closed reports whether Close was called.
func (c *Conn) Closed() bool { return c.closed.Load() }

// Lost reports whether err, from an operation on c, means the connection
// is gone rather than that the operation failed.
func (c *Conn) Lost(err error) bool {
	return err != nil && (IsConnLost(err) || c.IsDead() || c.Closed())
}

// Close ends the session and the connection; only the first call does
// anything. Errors from an already broken connection are of no use to
// anyone, so only the SSH close error of a live connection is returned.
func (c *Conn) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	wasDead := c.IsDead()
	serr := c.SFTP.Close()
	err := c.SSH.Close()
	if wasDead || errors.Is(err, net.ErrClosed) {
		return nil
	}
	if err == nil && serr != nil && !IsConnLost(serr) {
		err = serr
	}
	return err
}

// Dial connects, authenticates and starts the SFTP subsystem. The caller
// closes the Conn.
func Dial(ctx context.Context, cfg Config) (*Conn, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	client, err := sshDial(ctx, cfg)
	if err != nil {
		return nil, err
	}
	sc, err := sftp.NewClient(client,
		sftp.UseConcurrentWrites(true),
		sftp.UseConcurrentReads(true),
		sftp.UseFstat(true),
		sftp.MaxConcurrentRequestsPerFile(64))
	if err != nil {
		client.Close() //nolint:errcheck // already failing
		return nil, fmt.Errorf("start sftp session on %s: %w", cfg.Addr(), err)
	}
	c := &Conn{SSH: client, SFTP: sc, dead: make(chan struct{})}
	go func() {
		// Wait's error says why the connection ended; IsConnLost and the
		// operation's own error carry what callers need.
		_ = client.Wait()
		close(c.dead)
	}()
	go c.watchdog(cfg)
	return c, nil
}

// watchdog sends an SSH keepalive every third of cfg.ResponseTimeout and
// closes the connection when one is not answered within
// cfg.ResponseTimeout, so that requests to a server that hangs (or a path
// that drops every packet) fail instead of waiting forever: pkg/sftp's
// requests have no deadline of their own.
func (c *Conn) watchdog(cfg Config) {
	clk := clock.Real{}
	for {
		select {
		case <-c.dead:
			return
		case <-clk.After(cfg.ResponseTimeout / 3):
		}
		answered := make(chan struct{})
		go func() {
			// Any reply, even "unknown request", shows the server is
			// alive; an error means the connection ended, which dead
			// reports.
			_, _, _ = c.SSH.SendRequest("keepalive@openssh.com", true, nil)
			close(answered)
		}()
		select {
		case <-c.dead:
			return
		case <-answered:
		case <-clk.After(cfg.ResponseTimeout):
			if cfg.Debugf != nil {
				cfg.Debugf("sftp: %s did not answer a keepalive in %v; closing the connection", cfg.Addr(), cfg.ResponseTimeout)
			}
			c.timedOut.Store(true)
			// The transport first: closing the SFTP session waits for
			// answers that will not come. The requests in flight report
			// the failure.
			_ = c.SSH.Close()
			_ = c.Close()
			return
		}
	}
}

// sshDial opens the TCP connection and runs the SSH handshake within
// cfg.ConnectTimeout, classifying failures into this package's sentinels.
func sshDial(ctx context.Context, cfg Config) (*ssh.Client, error) {
	hostKey, hostKeyAlgos, err := hostKeyCheck(cfg)
	if err != nil {
		return nil, err
	}
	var hostKeyOK, authTried atomic.Bool
	auth, cleanup, err := authMethods(cfg, &authTried)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	clientCfg := &ssh.ClientConfig{
		User: cfg.User,
		HostKeyCallback: func(host string, remote net.Addr, key ssh.PublicKey) error {
			if err := hostKey(host, remote, key); err != nil {
				return err
			}
			hostKeyOK.Store(true)
			return nil
		},
		HostKeyAlgorithms: hostKeyAlgos,
		Auth:              auth,
		Timeout:           cfg.ConnectTimeout,
	}

	dctx, cancel := context.WithTimeout(ctx, cfg.ConnectTimeout)
	defer cancel()
	addr := cfg.Addr()
	dialContext := cfg.DialContext
	if dialContext == nil {
		var d net.Dialer
		dialContext = d.DialContext
	}
	tcp, err := dialContext(dctx, "tcp", addr)
	if err != nil && ctx.Err() == nil && dctx.Err() != nil {
		return nil, fmt.Errorf("connect to %s: %w (connect timeout %v): %w", addr, ErrTimeout, cfg.ConnectTimeout, err)
	}
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", addr, err)
	}
	// The handshake has no context: closing the socket ends it.
	stop := context.AfterFunc(dctx, func() {
		tcp.Close() //nolint:errcheck // aborting; the handshake reports the failure
	})
	sconn, chans, reqs, err := ssh.NewClientConn(tcp, addr, clientCfg)
	stopped := stop()
	switch {
	case err == nil && stopped:
		return ssh.NewClient(sconn, chans, reqs), nil
	case err == nil:
		sconn.Close() //nolint:errcheck // the context ended; the connection is unwanted
		return nil, fmt.Errorf("connect to %s: %w", addr, context.Cause(dctx))
	}
	tcp.Close() //nolint:errcheck // already failing
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("connect to %s: %w", addr, ctx.Err())
	case !stopped:
		return nil, fmt.Errorf("connect to %s: SSH handshake: %w (connect timeout %v): %w", addr, ErrTimeout, cfg.ConnectTimeout, err)
	case hostKeyOK.Load():
		// Past the host key, what remains of the handshake is
		// authentication.
		hint := "the server accepts none of the offered methods"
		if authTried.Load() {
			hint = "credentials rejected"
		}
		return nil, fmt.Errorf("log in to %s as %q: %w: %s (%v)", addr, cfg.User, ErrAuthFailed, hint, err)
	}
	return nil, fmt.Errorf("connect to %s: %w", addr, err)
}

// authMethods returns the credentials to offer, in order: key file,
// password, ssh-agent. cleanup closes the agent connection. Each method sets
// tried when the server asks for it, so that a failed handshake after that
// is known to be an authentication failure without reading error text.
func authMethods(cfg Config, tried *atomic.Bool) ([]ssh.AuthMethod, func(), error) {
	nop := func() {}
	var methods []ssh.AuthMethod
	if cfg.KeyFile != "" {
		pem, err := os.ReadFile(cfg.KeyFile)
		if err != nil {
			return nil, nop, fmt.Errorf("SSH key: %w", err)
		}
		signer, err := ssh.ParsePrivateKey(pem)
		var missing *ssh.PassphraseMissingError
		if errors.As(err, &missing) {
			return nil, nop, fmt.Errorf("%s: %w: decrypt it (ssh-keygen -p -f %s) or load it into ssh-agent and leave %s empty",
				cfg.KeyFile, ErrEncryptedKey, cfg.KeyFile, cfg.flag("key"))
		}
		if err != nil {
			return nil, nop, fmt.Errorf("SSH key %s: %w", cfg.KeyFile, err)
		}
		methods = append(methods, ssh.PublicKeysCallback(func() ([]ssh.Signer, error) {
			tried.Store(true)
			return []ssh.Signer{signer}, nil
		}))
	}
	if cfg.Password != "" {
		methods = append(methods, ssh.PasswordCallback(func() (string, error) {
			tried.Store(true)
			return cfg.Password, nil
		}))
	}
	if len(methods) > 0 {
		return methods, nop, nil
	}
	sock := cfg.AgentSocket
	if sock == "" {
		return nil, nop, fmt.Errorf("%w: give %s or %s, or start ssh-agent", ErrNoCredentials, cfg.flag("key"), cfg.flag("password"))
	}
	ac, err := net.Dial("unix", sock)
	if err != nil {
		return nil, nop, fmt.Errorf("%w: ssh-agent at $SSH_AUTH_SOCK: %w", ErrNoCredentials, err)
	}
	ag := agent.NewClient(ac)
	methods = append(methods, ssh.PublicKeysCallback(func() ([]ssh.Signer, error) {
		tried.Store(true)
		return ag.Signers()
	}))
	return methods, func() {
		ac.Close() //nolint:errcheck // only needed during the handshake
	}, nil
}

// hostKeyCheck returns the host key callback for cfg and the key algorithms
// to ask the server for (those of the keys known_hosts lists for the host,
// so that a server with several host keys shows the one we know).
func hostKeyCheck(cfg Config) (ssh.HostKeyCallback, []string, error) {
	if cfg.InsecureIgnoreHostKey {
		return ssh.InsecureIgnoreHostKey(), nil, nil
	}
	file := cfg.KnownHostsFile
	known, err := knownhosts.New(file)
	if errors.Is(err, fs.ErrNotExist) {
		known = func(string, net.Addr, ssh.PublicKey) error { return &knownhosts.KeyError{} }
	} else if err != nil {
		return nil, nil, fmt.Errorf("known hosts: %w", err)
	}
	cb := func(host string, remote net.Addr, key ssh.PublicKey) error {
		err := known(host, remote, key)
		var ke *knownhosts.KeyError
		if !errors.As(err, &ke) {
			return err
		}
		line := knownhosts.Line([]string{knownhosts.Normalize(host)}, key)
		if len(ke.Want) == 0 {
			return fmt.Errorf("%w: host %s offers %s key %s; if that is right, add it with\n  echo '%s' >> %s\nor connect once with ssh and confirm",
				ErrUnknownHostKey, host, key.Type(), ssh.FingerprintSHA256(key), line, file)
		}
		return fmt.Errorf("%w: host %s offers %s key %s, but %s:%d expects %s: the server was reinstalled or the connection is intercepted; fix the entry only if you know why",
			ErrHostKeyMismatch, host, key.Type(), ssh.FingerprintSHA256(key), ke.Want[0].Filename, ke.Want[0].Line, ssh.FingerprintSHA256(ke.Want[0].Key))
	}
	return cb, knownAlgorithms(known, cfg.Addr()), nil
}

// knownAlgorithms asks the known_hosts callback about a throwaway key: the
// resulting KeyError lists the host's known keys, whose algorithms we then
// prefer, followed by all others (so that a server that changed its key
// type shows up as ErrHostKeyMismatch, not as a negotiation failure). Nil
// (the default order) when none are known.
func knownAlgorithms(known ssh.HostKeyCallback, addr string) []string {
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil
	}
	probe, err := ssh.NewPublicKey(pub)
	if err != nil {
		return nil
	}
	remote := &net.TCPAddr{IP: net.IPv4zero}
	var ke *knownhosts.KeyError
	if !errors.As(known(addr, remote, probe), &ke) {
		return nil
	}
	var algos []string
	seen := map[string]bool{}
	for _, k := range ke.Want {
		for _, a := range algorithmsFor(k.Key.Type()) {
			if !seen[a] {
				seen[a] = true
				algos = append(algos, a)
			}
		}
	}
	if len(algos) == 0 {
		return nil
	}
	for _, a := range ssh.SupportedAlgorithms().HostKeys {
		if !seen[a] {
			seen[a] = true
			algos = append(algos, a)
		}
	}
	return algos
}

// algorithmsFor maps a key type to the signature algorithms that use it.
func algorithmsFor(keyType string) []string {
	if keyType == ssh.KeyAlgoRSA {
		return []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA}
	}
	return []string{keyType}
}
