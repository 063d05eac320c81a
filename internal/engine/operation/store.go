package operation

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
	"github.com/cloudstic/cloudstic/internal/store/s3"
	"github.com/cloudstic/cloudstic/internal/store/sftp"
	"github.com/cloudstic/cloudstic/internal/store/wrap"
)

// Errors of opening a store.
var (
	// ErrStoreURI marks a store URI that names no store we can open (an
	// unknown scheme, a missing bucket or path, a malformed SFTP URL).
	// The message names the URI and the problem.
	ErrStoreURI = errors.New("invalid store URI")
	// ErrNoRepository marks a store where no repository was created yet.
	ErrNoRepository = errors.New("repository not initialized")
	// ErrUnreachable marks a store that could not be opened or whose
	// repository config could not be read: the message is the cause's.
	ErrUnreachable = errors.New("store unreachable")
)

// StoreOptions name a store and say how to reach it: what a caller knows
// from its flags, profile or form, with secrets already read.
type StoreOptions struct {
	// URI is local:PATH (or a plain path), s3:BUCKET[/PREFIX],
	// b2:BUCKET[/PREFIX] or sftp://[user@]host[:port]/path.
	URI string
	// Create makes the directory of a local or SFTP store when missing
	// (init); otherwise a missing one is ErrNoRepository.
	Create bool
	// S3 holds the endpoint, region, profile, static credentials and
	// conditional-write setting of s3: stores; the bucket and prefix come
	// from URI.
	S3 s3.Config
	// B2 holds the credentials and region of b2: stores.
	B2 B2Options
	// SFTP holds the authentication of sftp:// stores; its User is used
	// when the URI names none. Host, port and path come from URI.
	SFTP sftp.Config
	// Connections bounds concurrent requests to S3 and B2 (0: the store's
	// default).
	Connections int
	// Logf, when set, gets one line per store request and the lock
	// protocol in use (-debug).
	Logf func(format string, args ...any)
	// Notef, when set, gets the lines of a remote store riding out a
	// failure: each retry and its wait, a reconnect, a read resumed, a
	// retry given up (nil: Logf gets them).
	Notef func(format string, args ...any)
	// TestWrapper, when set, wraps the store below the request logging
	// and the lock. Only test/crash's fault-injecting binary sets it.
	TestWrapper func(store.Store) store.Store
}

// B2Options are the Backblaze B2 settings of b2: stores.
type B2Options struct {
	// KeyID and AppKey, when KeyID is set, replace S3's static credentials.
	KeyID, AppKey string
	// Region is the B2 region (s3.Open's default when empty).
	Region string
}

// StoreError is a failure to reach or open the store itself (as opposed
// to the repository in it): a refused connection, missing credentials.
type StoreError struct {
	// URI is the store's URI, Scheme "s3", "b2" or "sftp".
	URI, Scheme string
	// Err is the store's error.
	Err error
}

// Error returns "opening URI: Err".
func (e *StoreError) Error() string { return fmt.Sprintf("opening %s: %v", e.URI, e.Err) }

// Unwrap returns the store's error.
func (e *StoreError) Unwrap() error { return e.Err }

// IsLocal reports whether uri names a local directory: local:PATH, or a
// plain path (one with a colon only when it starts with / or ., or is a
// Windows drive path such as C:\x or C:/x: no store or source kind is one
// letter long). OpenStore opens exactly these as local stores.
func IsLocal(uri string) bool {
	if strings.HasPrefix(uri, "local:") || isDrivePath(uri) {
		return true
	}
	if strings.Contains(uri, "://") {
		return false
	}
	return !strings.Contains(uri, ":") || strings.HasPrefix(uri, "/") || strings.HasPrefix(uri, ".")
}

// isDrivePath reports whether p starts with a Windows drive letter, a
// colon and a separator (C:\x, c:/x).
func isDrivePath(p string) bool {
	if len(p) < 3 || p[1] != ':' || (p[2] != '\\' && p[2] != '/') {
		return false
	}
	c := p[0] | 0x20 // lower case
	return c >= 'a' && c <= 'z'
}

// OpenStore opens the store o names, wrapped for request logging and
// counting, for the commands that work on the store itself. The caller
// closes it. With -debug (o.Logf) it names the lock protocol before the
// store's first request, so it waits for an S3 store's capability probe.
func OpenStore(ctx context.Context, o StoreOptions) (*wrap.Logging, error) {
	st, err := openLogged(ctx, o)
	if err != nil {
		return nil, err
	}
	logProtocol(st, o)
	return st, nil
}

// openLogged opens the store o names, wrapped for request logging and
// counting, without waiting for anything the store does in the background.
func openLogged(ctx context.Context, o StoreOptions) (*wrap.Logging, error) {
	inner, err := openBackend(ctx, o)
	if err != nil {
		return nil, err
	}
	if o.TestWrapper != nil {
		inner = o.TestWrapper(inner)
	}
	return wrap.NewLogging(inner, o.Logf), nil
}

// logProtocol names the lock protocol st's capabilities select (-debug).
// Asking an S3 store for its capabilities waits for its probe: Open calls
// this once the repository is open, the probe having run beside that, so
// that -debug does not make a command slower than it is without it.
func logProtocol(st store.Store, o StoreOptions) {
	if o.Logf != nil {
		o.Logf("lock protocol: %s", lock.Protocol(st.Capabilities()))
	}
}

// openBackend opens the store o.URI names.
func openBackend(ctx context.Context, o StoreOptions) (store.Store, error) {
	uri := o.URI
	switch {
	case strings.HasPrefix(uri, "local:"):
		return openLocal(strings.TrimPrefix(uri, "local:"), o.Create)
	case strings.HasPrefix(uri, "s3:"), strings.HasPrefix(uri, "b2:"):
		return openS3(ctx, o)
	case strings.HasPrefix(uri, "sftp://"):
		cfg, err := sftp.ParseURL(uri)
		if err != nil {
			return nil, badURI("%s: %v", uri, err)
		}
		if cfg.User == "" {
			cfg.User = o.SFTP.User
		}
		cfg.KeyFile, cfg.Password, cfg.KnownHostsFile = o.SFTP.KeyFile, o.SFTP.Password, o.SFTP.KnownHostsFile
		cfg.InsecureIgnoreHostKey, cfg.AgentSocket = o.SFTP.InsecureIgnoreHostKey, o.SFTP.AgentSocket
		cfg.ConnectTimeout, cfg.ResponseTimeout = o.SFTP.ConnectTimeout, o.SFTP.ResponseTimeout
		cfg.CreateDir = o.Create
		cfg.Logf, cfg.Notef = o.Logf, o.Notef
		st, err := sftp.Open(ctx, cfg)
		if errors.Is(err, sftp.ErrNoRepositoryDir) {
			return nil, fmt.Errorf("%w at %s (the remote directory does not exist)", ErrNoRepository, uri)
		}
		if err != nil {
			return nil, &StoreError{URI: uri, Scheme: "sftp", Err: err}
		}
		return st, nil
	case !IsLocal(uri):
		return nil, badURI("%q: unknown store type (want local:PATH, s3:BUCKET, b2:BUCKET or sftp://host/path)", uri)
	default:
		return openLocal(uri, o.Create)
	}
}

// openS3 opens an s3: or b2: store.
func openS3(ctx context.Context, o StoreOptions) (store.Store, error) {
	scheme := o.URI[:2]
	bucket, prefix, _ := strings.Cut(o.URI[3:], "/")
	if bucket == "" {
		return nil, badURI("%s: needs a bucket name, e.g. %s:my-bucket/backups", scheme, scheme)
	}
	cfg := o.S3
	cfg.Bucket, cfg.Prefix = bucket, strings.Trim(prefix, "/")
	cfg.MaxConnections, cfg.Logf, cfg.Notef = o.Connections, o.Logf, o.Notef
	if scheme == "b2" {
		cfg.Flavor = s3.FlavorB2
		cfg.Region = o.B2.Region
		if o.B2.KeyID != "" {
			cfg.AccessKey, cfg.SecretKey = o.B2.KeyID, o.B2.AppKey
		}
	}
	st, err := s3.Open(ctx, cfg)
	if err != nil {
		return nil, &StoreError{URI: o.URI, Scheme: scheme, Err: err}
	}
	return st, nil
}

// openLocal opens (with create, makes) the local directory dir.
func openLocal(dir string, create bool) (store.Store, error) {
	if dir == "" {
		return nil, badURI("local: needs a path, e.g. local:./backup_store")
	}
	fi, err := os.Stat(dir)
	switch {
	case err == nil && !fi.IsDir():
		return nil, fmt.Errorf("store path %s is not a directory", dir)
	case errors.Is(err, os.ErrNotExist) && !create:
		return nil, fmt.Errorf("%w at local:%s", ErrNoRepository, dir)
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, err
	}
	return local.New(dir), nil
}

// unreachable marks err as ErrUnreachable without changing its message.
type unreachable struct{ err error }

func (e *unreachable) Error() string        { return e.err.Error() }
func (e *unreachable) Unwrap() error        { return e.err }
func (e *unreachable) Is(target error) bool { return target == ErrUnreachable }

// uriError is an ErrStoreURI whose message is the problem alone.
type uriError struct{ msg string }

func (e *uriError) Error() string        { return e.msg }
func (e *uriError) Is(target error) bool { return target == ErrStoreURI }

func badURI(format string, args ...any) error {
	return &uriError{msg: fmt.Sprintf(format, args...)}
}
