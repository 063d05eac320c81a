package sftp

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sync"

	"github.com/pkg/sftp"

	"github.com/cloudstic/cloudstic/internal/sshconn"
	"github.com/cloudstic/cloudstic/internal/store"
)

const (
	extHardlink    = "hardlink@openssh.com"
	extPosixRename = "posix-rename@openssh.com"
	extFsync       = "fsync@openssh.com"
)

// Store is a store.Store in a directory of an SFTP server. It is safe for
// concurrent use.
type Store struct {
	cfg   Config
	root  string // absolute remote directory
	caps  store.Capabilities
	fsync bool

	mu      sync.Mutex
	conn    *sshconn.Conn // nil after Close, during a dial or after a failed one
	dialing *dialing      // the dial in progress, if any
	closed  bool
	// closing is done when Close is called: it ends a dial in progress,
	// which runs without s.mu.
	closing    context.Context
	endClosing context.CancelFunc
}

var (
	_ store.Store       = (*Store)(nil)
	_ store.RangeReader = (*Store)(nil)
)

// Open connects to the server, checks the remote directory (creating it if
// cfg.CreateDir) and the server's extensions. The caller must Close the
// store.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Check(); err != nil {
		return nil, fmt.Errorf("sftp: %w", err)
	}
	c, err := dial(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("sftp: %w", err)
	}
	s := &Store{cfg: cfg, conn: c}
	if err := s.init(ctx, c.SFTP); err != nil {
		c.Close() //nolint:errcheck // already failing
		return nil, fmt.Errorf("sftp %s: %w", s.Describe(), err)
	}
	s.closing, s.endClosing = context.WithCancel(context.Background())
	s.logf("sftp: connected to %s (create-if-absent: %v, fsync: %v)", s.Describe(), s.caps.CreateIfAbsent, s.fsync)
	return s, nil
}

// init resolves the root directory, creates it if asked, and reads the
// server's extensions.
func (s *Store) init(ctx context.Context, c *sftp.Client) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if _, ok := c.HasExtension(extPosixRename); !ok {
		return fmt.Errorf("server lacks %s, needed for atomic replacement", extPosixRename)
	}
	_, s.caps.CreateIfAbsent = c.HasExtension(extHardlink)
	_, s.fsync = c.HasExtension(extFsync)
	root := s.cfg.Path
	if !path.IsAbs(root) {
		wd, err := c.Getwd()
		if err != nil {
			return fmt.Errorf("login directory: %w", err)
		}
		root = path.Join(wd, root)
	}
	s.root = path.Clean(root)
	fi, err := c.Stat(s.root)
	switch {
	case isNotExist(err) && s.cfg.CreateDir:
		if err := c.MkdirAll(s.root); err != nil {
			return fmt.Errorf("create %s: %w", s.root, err)
		}
		s.logf("sftp: created %s", s.root)
		return nil
	case isNotExist(err):
		return fmt.Errorf("%s: %w", s.root, ErrNoRepositoryDir)
	case err != nil:
		return fmt.Errorf("%s: %w", s.root, err)
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory", s.root)
	}
	return nil
}

// Describe names the store as "sftp://user@host:port/path" (ParseURL
// syntax: an absolute path follows a double slash).
func (s *Store) Describe() string {
	c := s.cfg
	if s.root != "" {
		c.Path = s.root
	}
	return c.URL()
}

// RequestCost declares a server across a network's:
// store.RemoteRequestCost.
func (s *Store) RequestCost() int64 { return store.RemoteRequestCost }

// Capabilities: create-if-absent when the server has hardlink@openssh.com;
// never compare-and-swap.
func (s *Store) Capabilities() store.Capabilities { return s.caps }

// Close ends the connection, and a reconnect in progress (which then fails
// with ErrClosed). Operations after Close fail with ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	c := s.conn
	s.conn = nil
	s.closed = true
	s.mu.Unlock()
	s.endClosing()
	if c == nil {
		return nil
	}
	return c.Close()
}

func (s *Store) logf(format string, args ...any) {
	if s.cfg.Logf != nil {
		s.cfg.Logf(format, args...)
	}
}

// notef passes a line about riding out a failure to Config.Notef, else to
// Config.Logf.
func (s *Store) notef(format string, args ...any) {
	switch {
	case s.cfg.Notef != nil:
		s.cfg.Notef(format, args...)
	case s.cfg.Logf != nil:
		s.cfg.Logf(format, args...)
	}
}

// run calls fn on c once. If ctx ends while fn is in flight, the connection
// is closed so that fn returns; other operations on it then reconnect.
func (s *Store) run(ctx context.Context, c *sshconn.Conn, fn func(*sftp.Client) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() {
		// Aborting in-flight requests; their callers see the error.
		_ = c.Close()
	})
	err := fn(c.SFTP)
	stop()
	if cerr := ctx.Err(); cerr != nil && err != nil {
		return fmt.Errorf("%w (%v)", cerr, err)
	}
	if err != nil && c.TimedOut() {
		return fmt.Errorf("%w (no answer to a keepalive in %v): %w", store.ErrTimeout, s.cfg.ResponseTimeout, err)
	}
	return err
}

// lost reports whether err from an operation on c means the connection is
// gone rather than that the operation failed.
func lost(c *sshconn.Conn, err error) bool { return c.Lost(err) }

// do runs fn, and once more on a new connection if the connection was lost
// (unless ctx ended). fn must be safe to repeat: a conditional write whose
// outcome is unknown must not use do.
func (s *Store) do(ctx context.Context, fn func(*sftp.Client) error) error {
	return s.doConn(ctx, func(c *sshconn.Conn) error { return fn(c.SFTP) })
}

// doConn is do for fn that needs the connection it ran on (to keep using
// it after do returns: a stream, OpenRange).
func (s *Store) doConn(ctx context.Context, fn func(*sshconn.Conn) error) error {
	c, err := s.current(ctx)
	if err != nil {
		return err
	}
	err = s.run(ctx, c, func(*sftp.Client) error { return fn(c) })
	if !lost(c, err) || ctx.Err() != nil || c.TimedOut() {
		// A server that stopped answering is not dialled again: that
		// would double the wait before the command fails.
		return err
	}
	c, rerr := s.reconnect(ctx, c)
	if rerr != nil {
		return fmt.Errorf("%w; %w", err, rerr)
	}
	return s.run(ctx, c, func(*sftp.Client) error { return fn(c) })
}

// dial opens a connection for cfg. A connect or handshake that timed out
// is store.ErrTimeout, whose text tells the user the store did not answer.
func dial(ctx context.Context, cfg Config) (*sshconn.Conn, error) {
	c, err := sshconn.Dial(ctx, cfg.sshConfig())
	if errors.Is(err, sshconn.ErrTimeout) {
		return nil, fmt.Errorf("%w: %w", store.ErrTimeout, err)
	}
	return c, err
}
