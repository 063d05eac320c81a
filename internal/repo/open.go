package repo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo/cache"
	"github.com/cloudstic/cloudstic/internal/repo/crypt"
	"github.com/cloudstic/cloudstic/internal/repo/index"
	"github.com/cloudstic/cloudstic/internal/repo/kms"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/store"
)

// Credentials open an encrypted repository. Set at least one; when KMS is
// set, kms-platform slots are tried first, then the one secret given (a
// platform key before a recovery key before a password). Init makes one
// slot for KMS and one for the secret.
type Credentials struct {
	Password    string
	PlatformKey string // 64 hex digits
	RecoveryKey string // 24 words
	// KMS opens kms-platform slots with its key.
	KMS *kms.Client
}

// Empty reports whether no credential is set: an encrypted repository
// cannot be opened with them (ErrNeedCredential).
func (c Credentials) Empty() bool { return !c.hasSecret() && c.KMS == nil }

// hasSecret reports whether a password, platform key or recovery key is set.
func (c Credentials) hasSecret() bool {
	return c.Password != "" || c.PlatformKey != "" || c.RecoveryKey != ""
}

// secret returns the slot kind and secret bytes of the credential given.
func (c Credentials) secret() (string, []byte, error) {
	switch {
	case c.PlatformKey != "":
		b, err := crypt.ParsePlatformKey(c.PlatformKey)
		return crypt.SlotPlatform, b, err
	case c.RecoveryKey != "":
		b, err := crypt.ParseRecoveryKey(c.RecoveryKey)
		return crypt.SlotRecovery, b, err
	default:
		return crypt.SlotPassword, []byte(c.Password), nil
	}
}

// InitOptions say how to create a repository.
type InitOptions struct {
	Credentials
	NoEncryption   bool
	AddRecoveryKey bool
	Now            time.Time
	// Chunker and PackSize replace the defaults when set (tests use small
	// ones); they must pass DecodeConfig's bounds.
	Chunker  ChunkerParams
	PackSize int
}

// Repository is an opened repository, for reading: it has no method that
// writes to the store (those hang off a Writer, made from a lease; see
// writer.go) and does not hand its store out. Safe for concurrent use.
type Repository struct {
	st  store.Store
	cfg Config
	// authenticated: the config carries a MAC that this key verified.
	authenticated bool
	key           *crypt.Key
	codec         *pack.Codec
	idx           *index.Index
	cache         *cache.Cache // nil: no local metadata cache
	// derived is a cache used only for its derived files (the snapshot
	// heads), beside or instead of cache: a local store's objects are not
	// worth a copy on the same disk, but its heads file spares reading
	// every snapshot. Nil: none.
	derived   *cache.Cache
	diskIndex DiskIndex  // Dir "": the index is held in memory
	damage    *damageLog // nil: damaged objects are only returned (see WatchDamage)
	// reqCost is what the store declares a request costs
	// (store.RequestCost), taken before any wrapper that hides it.
	reqCost int64
	// packMu serialises whole-pack downloads into the cache, so that
	// goroutines reading trees of the same pack download it once.
	packMu sync.Mutex
}

// Config returns the repository's config.
func (r *Repository) Config() Config { return r.cfg }

// ConfigAuthenticated reports whether the repository's config carries a
// MAC that its key verified. False for unencrypted repositories (they have
// no key) and for encrypted ones whose config was written before configs
// had a MAC (BindConfig adds it).
func (r *Repository) ConfigAuthenticated() bool { return r.authenticated }

// Key returns the repository's working key.
func (r *Repository) Key() *crypt.Key { return r.key }

// Codec returns the blob codec.
func (r *Repository) Codec() *pack.Codec { return r.codec }

// RequestCost is what a request to the store costs beyond the bytes it
// moves, in bytes (store.RequestCost): readers choose with it between one
// read covering bytes they skip and several reads.
func (r *Repository) RequestCost() int64 { return r.reqCost }

// Index returns the merged index (empty until LoadIndex).
func (r *Repository) Index() *index.Index { return r.idx }

// Cache returns the local metadata cache, nil when there is none.
func (r *Repository) Cache() *cache.Cache { return r.cache }

// SetCache sets the local metadata cache (none by default; nil turns it
// off). Call it before loading anything.
func (r *Repository) SetCache(c *cache.Cache) { r.cache = c }

// SetDerivedCache sets a cache that is used only for the files derived
// from the repository's objects (see SnapshotHeads), never for copies of
// the objects: for a store whose objects are as cheap to read as a copy
// would be (a local disk), but whose snapshots are too many to read on
// every backup. The metadata cache, when set, serves for both.
func (r *Repository) SetDerivedCache(c *cache.Cache) { r.derived = c }

// derivedCache returns the cache of derived files: the metadata cache,
// else the one SetDerivedCache set; nil when there is neither.
func (r *Repository) derivedCache() *cache.Cache {
	if r.cache != nil {
		return r.cache
	}
	return r.derived
}

// Fresh returns a view of r with an empty index, sharing its store, keys
// and cache. A long-running reader (the web dashboard) loads the index
// anew into a fresh view for each request, so that it never looks up a
// pack a prune has deleted since an earlier load.
func (r *Repository) Fresh() *Repository {
	return &Repository{st: r.st, cfg: r.cfg, authenticated: r.authenticated,
		key: r.key, codec: r.codec, idx: index.New(), cache: r.cache, derived: r.derived, diskIndex: r.diskIndex, damage: r.damage, reqCost: r.reqCost}
}

func newRepository(st store.Store, cfg Config, key *crypt.Key) (*Repository, error) {
	codec, err := pack.NewCodec(key)
	if err != nil {
		return nil, err
	}
	return &Repository{st: st, cfg: cfg, key: key, codec: codec, idx: index.New(), reqCost: store.RequestCost(st)}, nil
}

// Init creates a repository in an empty store. It returns the recovery
// phrase when opts.AddRecoveryKey is set (shown to the user once).
func Init(ctx context.Context, st store.Store, opts InitOptions) (*Repository, string, error) {
	if _, err := st.Stat(ctx, ConfigKey); err == nil {
		return nil, "", fmt.Errorf("%s: %w", store.Describe(st), ErrAlreadyInitialized)
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, "", fmt.Errorf("checking for an existing repository: %w", err)
	}
	if opts.NoEncryption && (!opts.Empty() || opts.AddRecoveryKey) {
		return nil, "", errors.New("-no-encryption cannot be combined with a password or key")
	}
	if !opts.NoEncryption && opts.Empty() {
		return nil, "", ErrNeedCredential
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	cfg, err := defaultConfig(!opts.NoEncryption, now)
	if err != nil {
		return nil, "", err
	}
	if opts.Chunker != (ChunkerParams{}) {
		cfg.Chunker = opts.Chunker
	}
	if opts.PackSize != 0 {
		cfg.PackSize = opts.PackSize
	}
	var key *crypt.Key
	var words string
	if opts.NoEncryption {
		ck := make([]byte, 32)
		if _, err := rand.Read(ck); err != nil {
			return nil, "", err
		}
		cfg.ChunkerKey = hex.EncodeToString(ck)
		key = crypt.Unencrypted(ck)
	} else {
		master, err := crypt.NewMaster()
		if err != nil {
			return nil, "", err
		}
		if opts.KMS != nil {
			if err := addKMSSlot(ctx, st, opts.KMS, "initial "+crypt.SlotKMS, cfg.ID, master); err != nil {
				return nil, "", err
			}
		}
		if opts.hasSecret() {
			kind, secret, err := opts.secret()
			if err != nil {
				return nil, "", err
			}
			if err := addSecretSlot(ctx, st, kind, "initial "+kind, secret, master); err != nil {
				return nil, "", err
			}
		}
		if opts.AddRecoveryKey {
			entropy, w, err := crypt.NewRecoveryKey()
			if err != nil {
				return nil, "", err
			}
			if err := addSecretSlot(ctx, st, crypt.SlotRecovery, "recovery", entropy, master); err != nil {
				return nil, "", err
			}
			words = w
		}
		if key, err = crypt.FromMaster(master); err != nil {
			return nil, "", err
		}
		if err := cfg.sign(key); err != nil {
			return nil, "", err
		}
	}
	data, err := cfg.encode()
	if err != nil {
		return nil, "", err
	}
	// The config is written last: until it exists the store is not a
	// repository, so an interrupted init leaves nothing half-usable.
	var popts store.PutOptions
	if st.Capabilities().CreateIfAbsent {
		popts.IfAbsent = true
	}
	if _, err := st.Put(ctx, ConfigKey, data, popts); err != nil {
		if errors.Is(err, store.ErrExists) {
			return nil, "", fmt.Errorf("%s: %w", store.Describe(st), ErrAlreadyInitialized)
		}
		return nil, "", fmt.Errorf("writing config: %w", err)
	}
	r, err := newRepository(st, cfg, key)
	if r != nil {
		r.authenticated = key.Encrypted()
	}
	return r, words, err
}

// addSecretSlot wraps master with a new credential and stores the slot.
func addSecretSlot(ctx context.Context, st store.Store, kind, label string, secret, master []byte) error {
	slot, err := crypt.NewSlot(kind, label, secret, master)
	if err != nil {
		return err
	}
	return writeSlot(ctx, st, slot)
}

// writeSlot stores slot under a new random name.
func writeSlot(ctx context.Context, st store.Store, slot *crypt.Slot) error {
	data, err := slot.Encode()
	if err != nil {
		return err
	}
	name := make([]byte, 16)
	if _, err := rand.Read(name); err != nil {
		return err
	}
	if _, err := st.Put(ctx, "keys/"+hex.EncodeToString(name), data, store.PutOptions{}); err != nil {
		return fmt.Errorf("writing key slot: %w", err)
	}
	return nil
}

// Open opens an existing repository with the given credentials. An
// encrypted repository's config must pass its MAC (ErrConfigTampered). An
// unencrypted config is refused with ErrDowngrade when credentials were
// given or key slots exist: either means the repository was encrypted and
// its config was edited to switch encryption off, which would make the
// next backup store plaintext.
func Open(ctx context.Context, st store.Store, creds Credentials) (*Repository, error) {
	head, err := ReadHead(ctx, st)
	if err != nil {
		return nil, err
	}
	return OpenHead(ctx, st, head, creds)
}

// Head is what opening a repository reads before it needs credentials:
// the config (which says whether to ask for them) and the key slots.
type Head struct {
	// Config is the repository's config, as stored (not yet verified:
	// OpenHead checks its MAC with the key).
	Config Config
	// slots waits for the key slots' reading, which ReadHead started.
	slots func() slotRead
}

// ReadHead reads st's config and starts reading its key slots beside it:
// on a remote store the slots' listing and reads overlap the config's
// read, and what the caller does once it has the config (ask for a
// password, start taking a lock) overlaps the slots'. Its error is
// ReadConfig's; one reading the slots is OpenHead's, which needs them (an
// unencrypted repository does not).
func ReadHead(ctx context.Context, st store.Store) (Head, error) {
	read := make(chan slotRead, 1)
	go func() { read <- readSlots(ctx, st) }()
	cfg, err := ReadConfig(ctx, st)
	if err != nil {
		<-read // nothing outlives a failed read
		return Head{}, err
	}
	return Head{Config: cfg, slots: sync.OnceValue(func() slotRead { return <-read })}, nil
}

// Discard waits for what ReadHead started, for a caller that does not go
// on to OpenHead (its credentials could not be had).
func (h Head) Discard() { h.slots() }

// OpenHead is Open with the head the caller already read from st (with
// ReadHead, to learn whether to ask for credentials): the repository is
// opened with the very config the caller judged.
func OpenHead(ctx context.Context, st store.Store, head Head, creds Credentials) (*Repository, error) {
	cfg := head.Config
	// Wait for the slots' reading even when they are not needed: nothing
	// ReadHead started outlives the open.
	read := head.slots()
	if !cfg.Encrypted {
		// checkUnencrypted looks for any object under keys/, not only
		// the slots that read.
		if err := checkUnencrypted(ctx, st, creds); err != nil {
			return nil, err
		}
		ck, err := hex.DecodeString(cfg.ChunkerKey)
		if err != nil {
			return nil, fmt.Errorf("%w: chunker key", ErrCorruptConfig)
		}
		return newRepository(st, cfg, crypt.Unencrypted(ck))
	}
	if creds.Empty() {
		return nil, ErrNeedCredential
	}
	master, _, err := unlock(ctx, read, cfg.ID, creds)
	if err != nil {
		return nil, err
	}
	key, err := crypt.FromMaster(master)
	if err != nil {
		return nil, err
	}
	authenticated, err := cfg.verify(key)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", store.Describe(st), err)
	}
	r, err := newRepository(st, cfg, key)
	if r != nil {
		r.authenticated = authenticated
	}
	return r, err
}

// checkUnencrypted refuses an unencrypted config where there is evidence
// that the repository is encrypted: credentials given for it, or key
// slots under keys/ (init -no-encryption writes none, and key add
// refuses an unencrypted repository).
func checkUnencrypted(ctx context.Context, st store.Store, creds Credentials) error {
	if !creds.Empty() {
		return fmt.Errorf("%w: a password or key was given, but the config of %s says the repository is not encrypted (if it was created with init -no-encryption, give no password or key)",
			ErrDowngrade, store.Describe(st))
	}
	found, err := hasSlots(ctx, st)
	if err != nil {
		return err
	}
	if found {
		return fmt.Errorf("%w: the config of %s says the repository is not encrypted, but %s holds key slots",
			ErrDowngrade, store.Describe(st), KeysPrefix)
	}
	return nil
}

// errFound stops a listing at its first object.
var errFound = errors.New("found")

// hasSlots reports whether keys/ holds any object. The listing stops at
// the first one: a store writer may have planted millions.
func hasSlots(ctx context.Context, st store.Store) (bool, error) {
	err := st.List(ctx, KeysPrefix, func(store.ObjectInfo) error { return errFound })
	switch {
	case errors.Is(err, errFound):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("listing %s: %w", KeysPrefix, err)
	}
	return false, nil
}
