package cache

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cloudstic/cloudstic/internal/store"
)

// Sentinel errors.
var (
	// ErrMiss means the object is not cached (or its copy was damaged and
	// has been removed).
	ErrMiss = errors.New("not in cache")
	// ErrMismatch means data offered to Put does not hash to its name.
	ErrMismatch = errors.New("content does not match its name")
	// ErrInvalidRepoID means the repository id is not 1 to 64 hex digits.
	ErrInvalidRepoID = errors.New("invalid repository id for the cache")
)

// DefaultMaxBytes bounds one repository's cache unless Options say otherwise.
const DefaultMaxBytes = 2 << 30

// Environment variables read by FromEnv.
const (
	// EnvDisable turns the cache off when set to anything but "" or "0".
	EnvDisable = "CLOUDSTIC_NO_CACHE"
	// EnvDir overrides the cache directory.
	EnvDir = "CLOUDSTIC_CACHE_DIR"
	// EnvMaxMB overrides the size bound, in MiB.
	EnvMaxMB = "CLOUDSTIC_CACHE_MAX_MB"
	// EnvDiskIndexMinMB is the size of a repository's index files, in
	// MiB, from which its index is kept on disk (IndexDir) rather than in
	// memory; 0 means always.
	EnvDiskIndexMinMB = "CLOUDSTIC_DISK_INDEX_MIN_MB"
)

// Options say where the cache lives and how big it may grow.
type Options struct {
	// Dir holds one subdirectory per repository id.
	Dir string
	// MaxBytes bounds the cached bytes of one repository (default
	// DefaultMaxBytes).
	MaxBytes int64
	// DiskIndexMin is the size of the index files from which a
	// repository's index is kept on disk in IndexDir (0: the repository
	// package's default; negative: always).
	DiskIndexMin int64
}

// FromEnv returns the cache options from the environment: the directory
// from CLOUDSTIC_CACHE_DIR, else $XDG_CACHE_HOME/cloudstic, else
// $HOME/.cache/cloudstic. ok is false when the cache is disabled
// (CLOUDSTIC_NO_CACHE=1) or no directory can be found.
func FromEnv(getenv func(string) string) (opts Options, ok bool) {
	if v := getenv(EnvDisable); v != "" && v != "0" {
		return Options{}, false
	}
	if opts.Dir, ok = DirFromEnv(getenv); !ok {
		return Options{}, false
	}
	if mb, err := strconv.ParseInt(getenv(EnvMaxMB), 10, 64); err == nil && mb > 0 {
		opts.MaxBytes = mb << 20
	}
	if mb, err := strconv.ParseInt(getenv(EnvDiskIndexMinMB), 10, 64); err == nil && mb >= 0 {
		opts.DiskIndexMin = mb << 20
		if mb == 0 {
			opts.DiskIndexMin = -1
		}
	}
	return opts, true
}

// DirFromEnv returns the cache directory as FromEnv finds it, whether or
// not the cache is disabled: this host's memory of encrypted repositories
// (Known) lives there too and is kept even when nothing is cached. ok is
// false when no directory can be found.
func DirFromEnv(getenv func(string) string) (dir string, ok bool) {
	switch {
	case getenv(EnvDir) != "":
		return getenv(EnvDir), true
	case getenv("XDG_CACHE_HOME") != "":
		return filepath.Join(getenv("XDG_CACHE_HOME"), "cloudstic"), true
	case getenv("HOME") != "":
		return filepath.Join(getenv("HOME"), ".cache", "cloudstic"), true
	}
	return "", false
}

// Cache is one repository's local object cache. Safe for concurrent use,
// also by several processes.
type Cache struct {
	dir string
	max int64

	mu   sync.Mutex
	size int64 // bytes cached, as far as this process knows
}

// checkRepoID refuses a repository id that is not 1 to 64 hex digits: it
// names a directory, and comes from the store.
func checkRepoID(repoID string) error {
	if len(repoID) == 0 || len(repoID) > 64 {
		return fmt.Errorf("%w: %q", ErrInvalidRepoID, repoID)
	}
	if _, err := hex.DecodeString(repoID + strings.Repeat("0", len(repoID)%2)); err != nil {
		return fmt.Errorf("%w: %q", ErrInvalidRepoID, repoID)
	}
	return nil
}

// IndexDir is where the on-disk index of repository repoID lives (see
// repo.DiskIndex): beside the caches, not in one, so that a cache's size
// bound never counts or evicts it. It is not created.
func IndexDir(opts Options, repoID string) (string, error) {
	if err := checkRepoID(repoID); err != nil {
		return "", err
	}
	return filepath.Join(opts.Dir, "index", strings.ToLower(repoID)), nil
}

// Open opens (creating when needed) the cache of repository repoID.
func Open(opts Options, repoID string) (*Cache, error) {
	if err := checkRepoID(repoID); err != nil {
		return nil, err
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	dir := filepath.Join(opts.Dir, strings.ToLower(repoID))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	c := &Cache{dir: dir, max: opts.MaxBytes}
	files, err := c.files()
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		c.size += f.size
	}
	return c, nil
}

// Dir returns the repository's cache directory.
func (c *Cache) Dir() string { return c.dir }

// path maps a store key to its file; the key's last element must be an id.
func (c *Cache) path(key string) (string, [32]byte, error) {
	var want [32]byte
	if err := store.CheckKey(key); err != nil {
		return "", want, err
	}
	name := key[strings.LastIndex(key, "/")+1:]
	if len(name) != 64 {
		return "", want, fmt.Errorf("cache: key %q is not named by a hash", key)
	}
	if _, err := hex.Decode(want[:], []byte(name)); err != nil {
		return "", want, fmt.Errorf("cache: key %q is not named by a hash", key)
	}
	return filepath.Join(c.dir, filepath.FromSlash(key)), want, nil
}

// Get returns the cached copy of key after checking it against its name.
// A damaged copy is removed and reported as ErrMiss.
func (c *Cache) Get(key string) ([]byte, error) {
	p, want, err := c.path(key)
	if err != nil {
		return nil, err
	}
	data, err := readFile(p)
	if err != nil {
		return nil, err
	}
	if sha256.Sum256(data) != want {
		c.Remove(key)
		return nil, ErrMiss
	}
	c.touch(p)
	return data, nil
}

// ReadRange returns length bytes at offset of the cached copy of key,
// without hashing the whole object: the caller must verify what it reads
// (blobs are authenticated) and Remove the key when that fails.
func (c *Cache) ReadRange(key string, offset, length int64) ([]byte, error) {
	p, _, err := c.path(key)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrMiss
	}
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	defer f.Close() //nolint:errcheck // read-only; ReadAt reports read errors
	buf := make([]byte, length)
	if _, err := f.ReadAt(buf, offset); err != nil {
		if errors.Is(err, io.EOF) {
			// Shorter than the index says: a damaged copy.
			c.Remove(key)
			return nil, ErrMiss
		}
		return nil, fmt.Errorf("cache: %w", err)
	}
	c.touch(p)
	return buf, nil
}

// Put adds an object after checking that data hashes to its name. Objects
// larger than a quarter of the bound are not cached.
func (c *Cache) Put(key string, data []byte) error {
	p, want, err := c.path(key)
	if err != nil {
		return err
	}
	if sha256.Sum256(data) != want {
		return fmt.Errorf("cache: %s: %w", key, ErrMismatch)
	}
	if int64(len(data)) > c.max/4 {
		return nil
	}
	if _, err := os.Stat(p); err == nil {
		return nil // same name, same bytes
	}
	if err := writeFile(p, data); err != nil {
		return err
	}
	c.mu.Lock()
	c.size += int64(len(data))
	over := c.size > c.max
	c.mu.Unlock()
	if over {
		return c.evict()
	}
	return nil
}

// Remove drops key from the cache (missing keys are fine).
func (c *Cache) Remove(key string) {
	p, _, err := c.path(key)
	if err != nil {
		return
	}
	if fi, err := os.Stat(p); err == nil && os.Remove(p) == nil {
		c.mu.Lock()
		c.size -= fi.Size()
		c.mu.Unlock()
	}
}

// Retain removes every cached object under prefix for which keep returns
// false (objects the store no longer has, e.g. after prune or forget).
// It reads only the directory of prefix, not the whole cache, and no
// file's metadata: listings of many snapshots call it on every run.
func (c *Cache) Retain(prefix string, keep func(key string) bool) error {
	keys, err := c.keysUnder(prefix)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if !keep(k) {
			c.Remove(k)
		}
	}
	return nil
}

// derivedDir holds files derived from cached objects (GetDerived,
// PutDerived), next to the objects' first key elements.
const derivedDir = "derived"

// derivedPath maps a derived file's name (one path element of letters,
// digits and dashes) to its file.
func (c *Cache) derivedPath(name string) (string, error) {
	if name == "" || strings.Trim(name, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
		return "", fmt.Errorf("cache: invalid derived file name %q", name)
	}
	return filepath.Join(c.dir, derivedDir, name), nil
}

// GetDerived returns the derived file name (ErrMiss when there is none).
// Unlike objects, derived files are not named by their content: the
// caller authenticates what it reads (the repository seals them).
func (c *Cache) GetDerived(name string) ([]byte, error) {
	p, err := c.derivedPath(name)
	if err != nil {
		return nil, err
	}
	data, err := readFile(p)
	if err != nil {
		return nil, err
	}
	c.touch(p)
	return data, nil
}

// readFile reads a cached file: ErrMiss when there is none.
func readFile(p string) ([]byte, error) {
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrMiss
	}
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	return data, nil
}

// PutDerived replaces the derived file name with data, atomically (a
// concurrent reader sees the old or the new file). Like objects, derived
// files count towards the size bound and may be evicted.
func (c *Cache) PutDerived(name string, data []byte) error {
	p, err := c.derivedPath(name)
	if err != nil {
		return err
	}
	var old int64
	if fi, err := os.Stat(p); err == nil {
		old = fi.Size()
	}
	if err := writeFile(p, data); err != nil {
		return err
	}
	c.mu.Lock()
	c.size += int64(len(data)) - old
	over := c.size > c.max
	c.mu.Unlock()
	if over {
		return c.evict()
	}
	return nil
}

// writeFile writes data to p through a temp file renamed into place.
func writeFile(p string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), "tmp-*")
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), p)
	}
	if werr != nil {
		// Best effort: a leftover temp file is removed by the next eviction.
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("cache: %w", werr)
	}
	return nil
}

// touch marks a file as recently used for eviction.
func (c *Cache) touch(p string) {
	now := time.Now()
	// Best effort: a failed touch only makes the object older for eviction.
	_ = os.Chtimes(p, now, now)
}
