package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/cloudstic/cloudstic/internal/awsconf"
	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/config"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/termtext"
)

// app is the state of one command run.
type app struct {
	io  IO
	cmd *command
	g   globals
	// ctx is the run's context, for the work parse does after parsing
	// (reading secrets from a keyring may block).
	ctx context.Context
	// st is the opened store, repository or keyring, closed by closeStore.
	st openedStore
	// history records lease events for tests (historyEnv), or is nil.
	history *history
	// errMu serialises messages written to stderr from many goroutines
	// (engine warnings, -debug store logging), and guards damaged.
	errMu sync.Mutex
	// damaged are the damaged snapshots and index files the command
	// skipped (see noteDamage).
	damaged []repo.Damaged
	// role is "source " for the repository copy reads from (its flags
	// are the -from-* ones), "" for the main one.
	role string
	// explicit names the flags the command line gave (afterParse): they
	// win over a profile's settings.
	explicit map[string]bool
	// onProgress, when set, gets the progress events of a run the web
	// dashboard started, instead of stderr (see reporter).
	onProgress func(operation.Progress)
}

// flagName is how the user gives the global flag name for this app's
// repository: -name, or -from-name for copy's source.
func (a *app) flagName(name string) string {
	if a.role != "" {
		return "-from-" + name
	}
	return "-" + name
}

// globals are the flags every command accepts.
type globals struct {
	// repo holds the store settings config.StoreSettings lists (repo.URI
	// is -store), as a store entry of profiles.yaml holds them; the
	// password and keys, which an entry holds only as references, are
	// below.
	repo          config.Store
	password      string
	encryptionKey string
	recoveryKey   string
	json          bool
	jsonProgress  bool
	verbose       bool
	quiet         bool
	debug         bool
	lockWait      time.Duration
	storeConns    int
	timeouts      timeoutFlags
	noCache       bool
	s3            s3Flags
	sftpInsecure  bool
	prof          profileFlags
}

func envOr(getenv func(string) string, name, def string) string {
	if v := getenv(name); v != "" {
		return v
	}
	return def
}

func (g *globals) register(fs *flag.FlagSet, getenv func(string) string) {
	for _, s := range config.StoreSettings {
		fs.StringVar(g.setting(s), s.Flag, s.FlagDefault(getenv), s.Usage())
	}
	fs.BoolVar(&g.json, "json", false, "print one JSON document on stdout")
	fs.BoolVar(&g.jsonProgress, "json-progress", false, "stream progress as JSON lines on stderr (for GUIs)")
	fs.BoolVar(&g.verbose, "verbose", false, "print more detail")
	fs.BoolVar(&g.quiet, "quiet", false, "print only the summary")
	fs.BoolVar(&g.debug, "debug", false, "log every store request with its timing on stderr")
	fs.DurationVar(&g.lockWait, "lock-wait", 0, "when the repository is locked, or a lock request times out, retry for this long (e.g. 5m) instead of failing at once")
	fs.IntVar(&g.storeConns, "store-connections", 8, "concurrent store requests (S3, SFTP)")
	g.timeouts.register(fs, getenv)
	fs.BoolVar(&g.noCache, "no-cache", false, "do not use the local metadata cache (also CLOUDSTIC_NO_CACHE=1)")
	g.s3.register(fs, getenv)
	fs.BoolVar(&g.sftpInsecure, "store-sftp-insecure", false, "INSECURE: accept any SSH host key of an sftp:// store")
	g.prof.register(fs, getenv)
}

// setting is where the value of a store setting goes: its field in
// g.repo, or for the password and keys (which a store entry holds only
// as references) their own fields.
func (g *globals) setting(s config.Setting) *string {
	if v := s.Value(&g.repo); v != nil {
		return v
	}
	switch s.Flag {
	case "password":
		return &g.password
	case "encryption-key":
		return &g.encryptionKey
	case "recovery-key":
		return &g.recoveryKey
	}
	panic("config.StoreSettings: -" + s.Flag + " has no field in globals") // every command registers the globals: any CLI test finds this
}

// flags returns a FlagSet holding the global flags.
func (a *app) flags() *flag.FlagSet {
	fs := flag.NewFlagSet(a.cmd.name, flag.ContinueOnError)
	a.g.register(fs, a.io.Getenv)
	return fs
}

// warnf prints a warning on stderr (also in -json mode: stdout is reserved
// for the JSON document). Like infof and debugf it renders the arguments
// with termtext.Sprintf: the engine's messages name files and keys from
// the source and the store.
func (a *app) warnf(format string, args ...any) {
	a.errMu.Lock()
	defer a.errMu.Unlock()
	fmt.Fprintln(a.io.Stderr, termtext.Sprintf("warning: "+format, args...))
}

// infof prints progress information unless -quiet or -json.
func (a *app) infof(format string, args ...any) {
	if a.g.quiet || a.g.json {
		return
	}
	a.errMu.Lock()
	defer a.errMu.Unlock()
	fmt.Fprintln(a.io.Stderr, termtext.Sprintf(format, args...))
}

// notef prints a line about a store riding out a failure (a retry, a
// reconnect) on stderr, also in -json mode (stdout is the JSON document's);
// only with -verbose, never with -quiet (storeOptions).
func (a *app) notef(format string, args ...any) {
	a.errMu.Lock()
	defer a.errMu.Unlock()
	fmt.Fprintln(a.io.Stderr, termtext.Sprintf(format, args...))
}

func (a *app) debugf(format string, args ...any) {
	a.errMu.Lock()
	defer a.errMu.Unlock()
	fmt.Fprintln(a.io.Stderr, termtext.Sprintf("debug: "+format, args...))
}

// openStore opens the store named by -store, wrapped for -debug logging
// and request counting, for the commands that work on the store itself
// (init, cat config, locks, break-lock, key list).
func (a *app) openStore(ctx context.Context, forInit bool) (operation.Store, error) {
	so, err := a.storeOptions(forInit)
	if err != nil {
		return nil, err
	}
	st, err := operation.OpenStore(ctx, so)
	if err != nil {
		return nil, a.openErr(err)
	}
	a.st = st
	return st, nil
}

// openedStore is what closeStore closes: a store, or the repository or
// keyring opened in it.
type openedStore interface {
	Counts() operation.StoreCounts
	Close() error
}

func (a *app) closeStore() {
	if a.st == nil {
		return
	}
	if a.g.debug {
		c := a.st.Counts()
		a.debugf("store requests: %d, uploaded %d bytes, downloaded %d bytes", c.Requests, c.BytesUp, c.BytesDown)
	}
	if err := a.st.Close(); err != nil {
		a.warnf("closing store: %v", err)
	}
	a.st = nil // closed once, however many defers ask
}

// openErr says what to do about a store that could not be opened.
func (a *app) openErr(err error) error {
	var se *operation.StoreError
	switch {
	case errors.Is(err, operation.ErrStoreURI):
		return usageErr("-store %w", err)
	case errors.Is(err, operation.ErrOldSFTPPath):
		return err // names the URL to use instead
	case errors.Is(err, operation.ErrNoRepository):
		return fmt.Errorf("%w: run 'cloudstic init'", err)
	case errors.As(err, &se) && errors.Is(se.Err, awsconf.ErrNoCredentials):
		return fmt.Errorf("%w: %s", err, credentialHint(se.Scheme))
	case errors.Is(err, repo.ErrWrongCredential):
		// Cloudstic's words, which its users' scripts look for.
		return fmt.Errorf("%w (no provided credential matches)", err)
	}
	return err
}

// credentials returns what was given to unlock an encrypted repository:
// the secret flags and, with -kms-key-arn, a KMS client. When nothing was
// given it prompts for a password on a terminal (twice with confirm).
func (a *app) credentials(ctx context.Context, confirm bool) (repo.Credentials, error) {
	c := repo.Credentials{Password: a.g.password, PlatformKey: a.g.encryptionKey, RecoveryKey: a.g.recoveryKey}
	if a.g.repo.KMSKeyARN != "" {
		k, err := a.openKMS(ctx, a.g.repo.KMSKeyARN)
		if err != nil {
			return c, err
		}
		c.KMS = k
	}
	if c.Password != "" || c.PlatformKey != "" || c.RecoveryKey != "" || c.KMS != nil {
		return c, nil
	}
	pw, err := a.askPassword(confirm)
	c.Password = pw
	return c, err
}

// credentialsGiven reports whether a password or key was given without a
// prompt: by flag, environment, file, command, reference or KMS key.
func (a *app) credentialsGiven() bool {
	return a.g.password != "" || a.g.encryptionKey != "" || a.g.recoveryKey != "" || a.g.repo.KMSKeyARN != ""
}

// askPassword prompts for the repository password on a terminal (twice
// with confirm); it returns "" when stdin is not a terminal.
func (a *app) askPassword(confirm bool) (string, error) {
	f, ok := a.io.Stdin.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return "", nil
	}
	pw, err := a.prompt(f, a.role+"repository password: ")
	if err != nil {
		return "", err
	}
	if confirm {
		again, err := a.prompt(f, "enter the password again: ")
		if err != nil {
			return "", err
		}
		if again != pw {
			return "", errors.New("the passwords do not match")
		}
	}
	return pw, nil
}

func (a *app) prompt(f *os.File, label string) (string, error) {
	fmt.Fprint(a.io.Stderr, label)
	b, err := term.ReadPassword(int(f.Fd()))
	fmt.Fprintln(a.io.Stderr)
	if err != nil {
		return "", fmt.Errorf("reading password: %w", err)
	}
	return string(b), nil
}

// openRepo opens the store and the repository in it through the
// operation layer, which every command reading or writing snapshots goes
// through; the command closes it with closeStore.
func (a *app) openRepo(ctx context.Context) (*operation.Repo, error) {
	return a.openRepoAhead(ctx, operation.NoLockAhead)
}

// openRepoAhead is openRepo for a command whose first operation takes
// the lock ahead names: the open starts taking it beside the key's
// derivation.
func (a *app) openRepoAhead(ctx context.Context, ahead operation.LockAhead) (*operation.Repo, error) {
	o, err := a.openOptions()
	if err != nil {
		return nil, err
	}
	o.LockAhead = ahead
	r, err := operation.Open(ctx, o)
	switch {
	case errors.Is(err, repo.ErrNeedCredential) && a.role != "":
		return nil, fmt.Errorf("the %srepository at %s is encrypted: give -from-password-file, -from-password-command, -from-password-ref, -from-encryption-key, -from-recovery-key or -from-kms-key-arn (or CLOUDSTIC_FROM_PASSWORD)", a.role, a.g.repo.URI)
	case errors.Is(err, repo.ErrNeedCredential):
		return nil, errors.New("repository is encrypted: give -password (or CLOUDSTIC_PASSWORD), -encryption-key, -recovery-key or -kms-key-arn")
	case err != nil && a.role != "":
		return nil, fmt.Errorf("%srepository: %w", a.role, a.openErr(err))
	case err != nil:
		return nil, a.openErr(err)
	}
	a.st = r
	return r, nil
}

// openOptions are the operation layer's options for this run: the store
// from -store and its flags, the credentials (prompted for only when the
// repository is encrypted), the metadata cache, the lock settings.
func (a *app) openOptions() (operation.Options, error) {
	so, err := a.storeOptions(false)
	if err != nil {
		return operation.Options{}, err
	}
	return operation.Options{
		Store: so,
		Credentials: func(ctx context.Context) (repo.Credentials, error) {
			return a.credentials(ctx, false)
		},
		CredentialsGiven: a.credentialsGiven(),
		Cache:            a.cacheOptions(),
		KnownDir:         a.knownDir(),
		Lock:             a.lockOptions(),
		Clock:            clock.Real{},
		Warnf:            a.warnf,
		Debugf:           a.debugf,
		OnDamage:         a.noteDamage,
	}, nil
}

// lockOptions are the lock settings for this run.
func (a *app) lockOptions() operation.LockOptions {
	o := operation.LockOptions{Wait: a.g.lockWait}
	if a.history != nil {
		o.Trace = a.history.lease
	}
	return o
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
