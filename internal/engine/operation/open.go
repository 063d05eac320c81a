package operation

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/cache"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/wrap"
)

// Options say which repository to open and how every operation on it
// runs. The caller (the command line, a mount, a copy, a web dashboard)
// fills them from its flags or forms; prompting and reading secrets stay
// with it, behind Credentials.
type Options struct {
	// Store names the store and how to reach it.
	Store StoreOptions
	// Credentials returns what unlocks an encrypted repository. Open calls
	// it only when the repository's config says it is encrypted or
	// CredentialsGiven is set, so an unencrypted one never prompts;
	// OpenKeyring always calls it. nil gives no credentials.
	Credentials func(ctx context.Context) (repo.Credentials, error)
	// CredentialsGiven says the user gave a password or key up front (a
	// flag, the environment, a file, a command, a secret reference, a KMS
	// key), not one a prompt would ask for. An unencrypted repository is
	// then refused (repo.ErrDowngrade): whoever configured a password
	// expects an encrypted repository, and a store writer who switched
	// encryption off must not get the next backup in plaintext.
	CredentialsGiven bool
	// Cache, when set, is where the metadata cache of a remote
	// repository lives (nil: no cache; a local store's repository keeps
	// only derived files there, never copies of its objects: useCache),
	// and where any repository keeps a large index on disk (useDiskIndex).
	Cache *cache.Options
	// KnownDir is where this host remembers the repositories it opened
	// encrypted (cache.Known; the cache directory, also when nothing is
	// cached): such a repository whose config turns unencrypted is
	// refused. Empty: no memory.
	KnownDir string
	// Lock tunes the locks the operations take (Wait for -lock-wait,
	// Trace for tests; the zero value means the defaults).
	Lock lock.Options
	// Clock tells the time to the lock and to prune (default clock.Real).
	Clock clock.Clock
	// Warnf reports what does not fail an operation: a lock left behind
	// after the work succeeded (nil: not reported).
	Warnf func(format string, args ...any)
	// Debugf gets diagnostics: a cache that could not be opened (nil:
	// dropped).
	Debugf func(format string, args ...any)
	// LockAhead names the lock the first operation on the repository
	// takes, for Open to start taking while it derives the key
	// (NoLockAhead: the operation takes its lock when it starts).
	LockAhead LockAhead
	// OnDamage gets each damaged snapshot or index file the operations
	// skip, once per object (repo.Repository.WatchDamage); nil: they are
	// skipped without a word.
	OnDamage func(repo.Damaged)
}

// env is what every locked operation needs besides its own options.
type env struct {
	lock  lock.Options
	clock clock.Clock
	warn  func(format string, args ...any)
	// ahead is the lock Open started taking for the first operation
	// (Options.LockAhead); nil: none.
	ahead *aheadLock
}

func (e env) warnf(format string, args ...any) {
	if e.warn != nil {
		e.warn(format, args...)
	}
}

func (o Options) env() env {
	e := env{lock: o.Lock, clock: o.Clock, warn: o.Warnf}
	if e.clock == nil {
		e.clock = clock.Real{}
	}
	if e.lock.Clock == nil {
		e.lock.Clock = e.clock
	}
	return e
}

// Repo is an opened repository: the only value the operations of this
// package run on. It hands out the repository for reading (Reader), never
// its store or a writer: every write is one of this package's operations,
// under the lock the seed gives it. Close it when done.
type Repo struct {
	r   *repo.Repository
	st  *wrap.Logging
	env env
}

// Reader returns the repository, for reads that need no lock (listing,
// check, diff, cat). It has no method that writes.
func (r *Repo) Reader() *repo.Repository { return r.r }

// Describe names the repository's store, e.g. "local:/backups" or
// "s3:bucket/prefix".
func (r *Repo) Describe() string { return store.Describe(r.st) }

// Counts returns the store requests made so far.
func (r *Repo) Counts() wrap.Counts { return r.st.Counts() }

// Close releases the lock Open took ahead if no operation used it
// (Options.LockAhead), and closes the store.
func (r *Repo) Close() error {
	aheadErr := r.env.ahead.drop(context.Background())
	return errors.Join(aheadErr, r.st.Close())
}

// Open opens the store and the repository in it: it reads the config,
// asks for credentials only when the repository is encrypted, unlocks it
// and gives a remote repository its metadata cache. Failures wrap
// ErrNoRepository; ErrUnreachable (with ErrStoreURI or *StoreError when
// they apply) for a store that could not be opened or read;
// repo.ErrNeedCredential or repo.ErrWrongCredential; or are the
// credential source's own, so callers can say what to do about each.
func Open(ctx context.Context, o Options) (*Repo, error) {
	st, err := openLogged(ctx, o.Store)
	if err != nil {
		return nil, withOldSFTPPath(ctx, o.Store, &unreachable{err})
	}
	env := o.env()
	r, err := openRepository(ctx, st, o, &env)
	if err != nil {
		_ = st.Close() // the open failed; that error is the one to report
		return nil, withOldSFTPPath(ctx, o.Store, err)
	}
	logProtocol(st, o.Store)
	return &Repo{r: r, st: st, env: env}, nil
}

// openRepository reads the config in st and unlocks the repository,
// starting to take o.LockAhead's lock (into env.ahead) once it has the
// credentials; an open that fails releases it.
func openRepository(ctx context.Context, st *wrap.Logging, o Options, env *env) (_ *repo.Repository, err error) {
	head, err := repo.ReadHead(ctx, st)
	if errors.Is(err, repo.ErrNotRepository) {
		return nil, fmt.Errorf("%w at %s", ErrNoRepository, o.Store.URI)
	}
	if err != nil {
		return nil, &unreachable{err}
	}
	var creds repo.Credentials
	if (head.Config.Encrypted || o.CredentialsGiven) && o.Credentials != nil {
		if creds, err = o.Credentials(ctx); err != nil {
			head.Discard()
			return nil, err
		}
	}
	if head.Config.Encrypted && creds.Empty() {
		o.LockAhead = NoLockAhead // the open fails with ErrNeedCredential
	}
	if env.ahead = startAhead(ctx, st, *env, o.LockAhead); env.ahead != nil {
		defer func() {
			if err != nil {
				// The open's error is the one to report; the lock expires
				// by itself if it could not be removed.
				_ = env.ahead.drop(ctx)
				env.ahead = nil
			}
		}()
	}
	r, err := repo.OpenHead(ctx, st, head, creds)
	if err == nil {
		err = checkHostMemory(r, st, o)
	}
	switch {
	case errors.Is(err, repo.ErrNeedCredential):
		return nil, err
	case errors.Is(err, repo.ErrWrongCredential), err != nil && creds.KMS != nil:
		// Keep the details: they name key slots that are damaged, which
		// is not the same problem as a mistyped password, and say why KMS
		// refused.
		return nil, fmt.Errorf("cannot open repository at %s: %w", o.Store.URI, err)
	case err != nil:
		return nil, err
	}
	useCache(r, o)
	useDiskIndex(r, o)
	if o.OnDamage != nil {
		r.WatchDamage(o.OnDamage)
	}
	// Unlocking a password slot allocates argon2id's memory; give it back
	// now so it does not add to the peak of the work that follows.
	debug.FreeOSMemory()
	return r, nil
}

// checkHostMemory compares the repository with this host's memory of
// encrypted repositories (cache.Known, in the cache directory): an
// unencrypted one that this host opened or created encrypted before is
// refused with repo.ErrDowngrade, and an encrypted one is remembered.
// Without a directory (Options.KnownDir) there is no memory to keep.
func checkHostMemory(r *repo.Repository, st store.Store, o Options) error {
	if o.KnownDir == "" {
		return nil
	}
	known := cache.NewKnown(o.KnownDir)
	cfg := r.Config()
	loc := Location(st, o.Store)
	if cfg.Encrypted {
		if err := known.RememberEncrypted(cfg.ID, loc); err != nil && o.Debugf != nil {
			o.Debugf("%v", err)
		}
		return nil
	}
	record, err := known.WasEncrypted(cfg.ID, loc)
	if err != nil {
		return err
	}
	if record != "" {
		return fmt.Errorf("%w: this host opened the repository at %s (or one with id %s) encrypted before, and its config now says it is not (if you re-created it without encryption on purpose, delete %s)",
			repo.ErrDowngrade, o.Store.URI, cfg.ID, record)
	}
	return nil
}

// RememberEncrypted records in this host's memory (see checkHostMemory)
// that the repository r, just created in st, is encrypted.
func RememberEncrypted(r *repo.Repository, st store.Store, o Options) error {
	if o.KnownDir == "" || !r.Config().Encrypted {
		return nil
	}
	return cache.NewKnown(o.KnownDir).RememberEncrypted(r.Config().ID, Location(st, o.Store))
}

// Location names the place of a store for this host's memory of
// repositories: its description, with a local directory made absolute and
// an S3 endpoint added, so that one place has one name.
func Location(st store.Store, o StoreOptions) string {
	d := store.Describe(st)
	if dir, ok := strings.CutPrefix(d, "local:"); ok {
		if abs, err := filepath.Abs(dir); err == nil {
			return "local:" + abs
		}
	}
	if o.S3.Endpoint != "" && (strings.HasPrefix(d, "s3:") || strings.HasPrefix(d, "b2:")) {
		return d + "@" + o.S3.Endpoint
	}
	return d
}

// useCache gives a repository in a remote store its local metadata cache
// of index files, snapshots and tree packs. Local stores get the cache's
// derived files only (repo.SetDerivedCache): a copy of their objects on
// the same disk would save nothing, but the snapshot heads file spares a
// backup reading every snapshot, thousands in a repository many hosts back
// up into. A cache that cannot be opened is left out: it only ever saves
// reads.
func useCache(r *repo.Repository, o Options) {
	if o.Cache == nil {
		return
	}
	c, err := cache.Open(*o.Cache, r.Config().ID)
	if err != nil {
		if o.Debugf != nil {
			o.Debugf("metadata cache not used: %v", err)
		}
		return
	}
	if IsLocal(o.Store.URI) {
		r.SetDerivedCache(c)
		return
	}
	r.SetCache(c)
}

// useDiskIndex lets a repository keep a large index on disk, in the cache
// directory (cache.IndexDir), for every kind of store: its memory then no
// longer grows with the repository. Without a cache directory (-no-cache)
// the index is held in memory.
func useDiskIndex(r *repo.Repository, o Options) {
	if o.Cache == nil {
		return
	}
	dir, err := cache.IndexDir(*o.Cache, r.Config().ID)
	if err != nil {
		if o.Debugf != nil {
			o.Debugf("on-disk index not used: %v", err)
		}
		return
	}
	r.SetDiskIndex(repo.DiskIndex{Dir: dir, Min: o.Cache.DiskIndexMin, Clock: o.Clock})
}

// Keyring is an opened keyring, for the key operations. Like Repo, it
// reads; its writes are this package's key operations. Close it when done.
type Keyring struct {
	kr  *repo.Keyring
	st  *wrap.Logging
	env env
}

// Current returns the id of the slot the keyring was opened with.
func (k *Keyring) Current() string { return k.kr.Current() }

// List returns every key slot, marking the current one.
func (k *Keyring) List(ctx context.Context) ([]repo.KeySlot, error) { return k.kr.List(ctx) }

// Find resolves ref, a label or an id prefix, to one slot.
func (k *Keyring) Find(ctx context.Context, ref string) (repo.KeySlot, error) {
	return k.kr.Find(ctx, ref)
}

// Counts returns the store requests made so far.
func (k *Keyring) Counts() wrap.Counts { return k.st.Counts() }

// Close closes the store.
func (k *Keyring) Close() error { return k.st.Close() }

// OpenKeyring opens the store and unlocks the keyring of the repository in
// it with the credentials (asked for first, always). Failures are those of
// OpenStore and repo.OpenKeyring.
func OpenKeyring(ctx context.Context, o Options) (*Keyring, error) {
	st, err := openLogged(ctx, o.Store)
	if err != nil {
		return nil, withOldSFTPPath(ctx, o.Store, err)
	}
	var creds repo.Credentials
	if o.Credentials != nil {
		creds, err = o.Credentials(ctx)
	}
	var kr *repo.Keyring
	if err == nil {
		kr, err = repo.OpenKeyring(ctx, st, creds)
	}
	if err != nil {
		_ = st.Close() // the open failed; that error is the one to report
		return nil, err
	}
	logProtocol(st, o.Store)
	return &Keyring{kr: kr, st: st, env: o.env()}, nil
}

// Fresh returns a view of r with an empty index (repo.Repository.Fresh)
// and r's store and lock settings. A long-running reader (the web
// dashboard) opens one per request, so that it never looks up a pack a
// prune deleted since an earlier load. Close r, not the view.
func (r *Repo) Fresh() *Repo { return &Repo{r: r.r.Fresh(), st: r.st, env: r.env} }

// Locks lists the repository's lock objects, as the `locks` command does
// (Locks with r's lock settings).
func (r *Repo) Locks(ctx context.Context) ([]lock.Info, error) {
	return lock.List(ctx, r.st, r.env.lock)
}
