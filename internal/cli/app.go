package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/wrap"
)

// app is the state of one command run.
type app struct {
	io  IO
	cmd *command
	g   globals
	// ctx is the run's context, for the work parse does after parsing
	// (reading secrets from a keyring may block).
	ctx context.Context
	st  *wrap.Logging
	// history records lease events for tests (historyEnv), or is nil.
	history *history
	// errMu serialises messages written to stderr from many goroutines
	// (engine warnings, -debug store logging).
	errMu sync.Mutex
}

// globals are the flags every command accepts.
type globals struct {
	store         string
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
	noCache       bool
	s3            s3Flags
	sftp          sftpFlags
	kms           kmsFlags
	prof          profileFlags
}

func envOr(getenv func(string) string, name, def string) string {
	if v := getenv(name); v != "" {
		return v
	}
	return def
}

func (g *globals) register(fs *flag.FlagSet, getenv func(string) string) {
	fs.StringVar(&g.store, "store", envOr(getenv, "CLOUDSTIC_STORE", "local:./backup_store"),
		"repository store: local:PATH, s3:BUCKET[/PREFIX], b2:BUCKET[/PREFIX] or sftp://[user@]host[:port]/path (env CLOUDSTIC_STORE)")
	fs.StringVar(&g.password, "password", getenv("CLOUDSTIC_PASSWORD"), "repository password (env CLOUDSTIC_PASSWORD; prompted on a terminal when missing)")
	fs.StringVar(&g.encryptionKey, "encryption-key", getenv("CLOUDSTIC_ENCRYPTION_KEY"), "platform key, 64 hex digits, instead of a password (env CLOUDSTIC_ENCRYPTION_KEY)")
	fs.StringVar(&g.recoveryKey, "recovery-key", getenv("CLOUDSTIC_RECOVERY_KEY"), "24-word recovery key, instead of a password")
	fs.BoolVar(&g.json, "json", false, "print one JSON document on stdout")
	fs.BoolVar(&g.jsonProgress, "json-progress", false, "stream progress as JSON lines on stderr (for GUIs)")
	fs.BoolVar(&g.verbose, "verbose", false, "print more detail")
	fs.BoolVar(&g.quiet, "quiet", false, "print only the summary")
	fs.BoolVar(&g.debug, "debug", false, "log every store request with its timing on stderr")
	fs.DurationVar(&g.lockWait, "lock-wait", 0, "when the repository is locked, retry for this long (e.g. 5m) instead of failing at once")
	fs.IntVar(&g.storeConns, "store-connections", 8, "concurrent store requests (S3, SFTP)")
	fs.BoolVar(&g.noCache, "no-cache", false, "do not use the local metadata cache of remote repositories (also CLOUDSTIC_NO_CACHE=1)")
	g.s3.register(fs, getenv)
	g.sftp.register(fs, getenv)
	g.kms.register(fs, getenv)
	g.prof.register(fs, getenv)
}

// flags returns a FlagSet holding the global flags.
func (a *app) flags() *flag.FlagSet {
	fs := flag.NewFlagSet(a.cmd.name, flag.ContinueOnError)
	a.g.register(fs, a.io.Getenv)
	return fs
}

// warnf prints a warning on stderr (also in -json mode: stdout is reserved
// for the JSON document).
func (a *app) warnf(format string, args ...any) {
	a.errMu.Lock()
	defer a.errMu.Unlock()
	fmt.Fprintf(a.io.Stderr, "warning: "+format+"\n", args...)
}

// infof prints progress information unless -quiet or -json.
func (a *app) infof(format string, args ...any) {
	if a.g.quiet || a.g.json {
		return
	}
	a.errMu.Lock()
	defer a.errMu.Unlock()
	fmt.Fprintf(a.io.Stderr, format+"\n", args...)
}

func (a *app) debugf(format string, args ...any) {
	a.errMu.Lock()
	defer a.errMu.Unlock()
	fmt.Fprintf(a.io.Stderr, "debug: "+format+"\n", args...)
}

// openStore opens the store named by -store, wrapped for -debug logging
// and request counting.
func (a *app) openStore(ctx context.Context, forInit bool) (store.Store, error) {
	inner, err := a.openBackend(ctx, forInit)
	if err != nil {
		return nil, err
	}
	if wrap := a.io.TestStoreWrapper; wrap != nil {
		inner = wrap(inner)
	}
	var logf func(string, ...any)
	if a.g.debug {
		logf = a.debugf
		a.debugf("lock protocol: %s", lock.Protocol(inner.Capabilities()))
	}
	a.st = wrap.NewLogging(inner, logf)
	return a.st, nil
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
}

// credentials returns what was given to unlock an encrypted repository:
// the secret flags and, with -kms-key-arn, a KMS client. When nothing was
// given it prompts for a password on a terminal (twice with confirm).
func (a *app) credentials(ctx context.Context, confirm bool) (repo.Credentials, error) {
	c := repo.Credentials{Password: a.g.password, PlatformKey: a.g.encryptionKey, RecoveryKey: a.g.recoveryKey}
	if a.g.kms.keyARN != "" {
		k, err := a.openKMS(ctx, a.g.kms.keyARN)
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

// askPassword prompts for the repository password on a terminal (twice
// with confirm); it returns "" when stdin is not a terminal.
func (a *app) askPassword(confirm bool) (string, error) {
	f, ok := a.io.Stdin.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return "", nil
	}
	pw, err := a.prompt(f, "repository password: ")
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

// openRepo opens the store and the repository in it.
func (a *app) openRepo(ctx context.Context) (*repo.Repository, error) {
	st, err := a.openStore(ctx, false)
	if err != nil {
		return nil, err
	}
	cfg, err := repo.ReadConfig(ctx, st)
	if errors.Is(err, repo.ErrNotRepository) {
		return nil, fmt.Errorf("repository not initialized at %s: run 'cloudstic init'", a.g.store)
	}
	if err != nil {
		return nil, err
	}
	var creds repo.Credentials
	if cfg.Encrypted {
		if creds, err = a.credentials(ctx, false); err != nil {
			return nil, err
		}
	}
	r, err := repo.Open(ctx, st, creds)
	if err == nil {
		a.useCache(r)
		// Unlocking a password slot allocates argon2id's memory; give it
		// back now so it does not add to the peak of the work that follows.
		debug.FreeOSMemory()
	}
	switch {
	case errors.Is(err, repo.ErrNeedCredential):
		return nil, errors.New("repository is encrypted: give -password (or CLOUDSTIC_PASSWORD), -encryption-key, -recovery-key or -kms-key-arn")
	case errors.Is(err, repo.ErrWrongCredential), err != nil && creds.KMS != nil:
		// Keep the details: they name key slots that are damaged, which
		// is not the same problem as a mistyped password, and say why KMS
		// refused.
		return nil, fmt.Errorf("cannot open repository at %s: %w", a.g.store, err)
	}
	return r, err
}

// indexedSnapshots loads r's index and lists its snapshots, oldest first:
// what every command reading snapshot contents needs first.
func indexedSnapshots(ctx context.Context, r *repo.Repository) ([]snapshot.WithID, error) {
	if _, err := r.LoadIndex(ctx); err != nil {
		return nil, err
	}
	return r.Snapshots(ctx)
}

// lockOptions are the lock settings for this run.
func (a *app) lockOptions() lock.Options {
	o := lock.Options{Wait: a.g.lockWait}
	if a.history != nil {
		o.Trace = a.history.lease
	}
	return o
}

// env is what the operation layer needs from this run: the lock settings
// and where to warn.
func (a *app) env() operation.Env {
	return operation.Env{Lock: a.lockOptions(), Warnf: a.warnf}
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
