package repo

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/cloudstic/cloudstic/internal/repo/cache"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/index"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
	"github.com/cloudstic/cloudstic/internal/store"
)

// Key prefixes of the layout.
const (
	DataPrefix     = "data/"
	IndexPrefix    = "index/packs/"
	SnapshotPrefix = "snapshots/"
	KeysPrefix     = "keys/"
)

// Errors of loading objects.
var (
	// ErrBlobNotFound means the index does not know a blob.
	ErrBlobNotFound = errors.New("blob not in index")
	// ErrCorrupt means a stored object does not match its name or cannot
	// be decoded.
	ErrCorrupt = errors.New("corrupt object")
	// ErrAmbiguous means a snapshot prefix matches several snapshots.
	ErrAmbiguous = errors.New("ambiguous snapshot id")
	// ErrNoSnapshot means no snapshot matches.
	ErrNoSnapshot = errors.New("no matching snapshot")
)

// PackKey is the store key of a pack.
func PackKey(p id.ID) string { s := p.String(); return DataPrefix + s[:2] + "/" + s }

// IndexKey is the store key of an index file.
func IndexKey(i id.ID) string { return IndexPrefix + i.String() }

// SnapshotKey is the store key of a snapshot.
func SnapshotKey(s id.ID) string { return SnapshotPrefix + s.String() }

// IDFromKey parses the id at the end of a key ("data/ab/<id>" → id).
func IDFromKey(key string) (id.ID, error) {
	return id.Parse(key[strings.LastIndex(key, "/")+1:])
}

// loadSealed fetches an object named by the hash of its bytes (at most
// MaxMetadataSize of them), from the metadata cache when it holds it,
// checks the hash and unseals it.
func (r *Repository) loadSealed(ctx context.Context, key string) ([]byte, error) {
	if r.cache != nil {
		// Checked against its name; any error: ask the store.
		if data, _ := r.cache.Get(key); data != nil {
			return r.unseal(key, data)
		}
	}
	return r.loadSealedFromStore(ctx, key)
}

// loadSealedFromStore is loadSealed reading from the store, never from
// the metadata cache (which it refreshes).
func (r *Repository) loadSealedFromStore(ctx context.Context, key string) ([]byte, error) {
	want, err := IDFromKey(key)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	data, err := r.st.Get(ctx, key, MaxMetadataSize)
	if err != nil {
		return nil, err
	}
	if sha256.Sum256(data) != want {
		return nil, fmt.Errorf("%s: %w: content does not match its name", key, ErrCorrupt)
	}
	if r.cache != nil {
		// A failed cache write only costs a download next time.
		_ = r.cache.Put(key, data)
	}
	return r.unseal(key, data)
}

// unseal opens the sealed bytes of the object key.
func (r *Repository) unseal(key string, data []byte) ([]byte, error) {
	plain, err := r.codec.DecodeRaw(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %w", key, ErrCorrupt, err)
	}
	return plain, nil
}

// saveSealed seals plain and stores it under prefix + sha256(sealed),
// never overwriting (names are content hashes: an existing object with the
// same name holds the same bytes).
func (r *Repository) saveSealed(ctx context.Context, prefix string, plain []byte) (id.ID, error) {
	if err := checkMetadataSize(prefix, len(plain)); err != nil {
		return id.ID{}, err
	}
	sealed, err := r.codec.EncodeRaw(plain)
	if err != nil {
		return id.ID{}, err
	}
	oid := id.ID(sha256.Sum256(sealed))
	var opts store.PutOptions
	if r.st.Capabilities().CreateIfAbsent {
		opts.IfAbsent = true
	}
	key := prefix + oid.String()
	if _, err := r.st.Put(ctx, key, sealed, opts); err != nil && !errors.Is(err, store.ErrExists) {
		return id.ID{}, err
	}
	if r.cache != nil {
		// The next run reads what this one wrote (the parent snapshot,
		// the new index file): keep it rather than download it again.
		// A failed cache write only costs that download.
		_ = r.cache.Put(key, sealed)
	}
	return oid, nil
}

// ListIDs returns the ids of every object under prefix, skipping keys that
// are not ids (reported through bad).
func (r *Repository) ListIDs(ctx context.Context, prefix string) (ids []id.ID, bad []string, err error) {
	objs, bad, err := r.listRetaining(ctx, prefix)
	return entryIDs(objs), bad, err
}

// listRetaining is ListObjects; after a complete listing of index files or
// snapshots it also drops from the metadata cache those the store no
// longer has.
func (r *Repository) listRetaining(ctx context.Context, prefix string) ([]ObjectEntry, []string, error) {
	objs, bad, err := r.ListObjects(ctx, prefix)
	if err == nil && r.cache != nil && (prefix == IndexPrefix || prefix == SnapshotPrefix) {
		r.retainCached(prefix, entryIDs(objs), func(i id.ID) string { return prefix + i.String() })
	}
	return objs, bad, err
}

// entryIDs returns the ids of listed objects.
func entryIDs(objs []ObjectEntry) []id.ID {
	ids := make([]id.ID, len(objs))
	for i, o := range objs {
		ids[i] = o.ID
	}
	return ids
}

// retainCached drops cached objects under prefix that a complete listing
// did not name (deleted by prune or forget).
func (r *Repository) retainCached(prefix string, ids []id.ID, key func(id.ID) string) {
	keep := make(map[string]bool, len(ids))
	for _, i := range ids {
		keep[key(i)] = true
	}
	// Best effort: stale copies are never read (nothing names them) and
	// eviction removes them eventually.
	_ = r.cache.Retain(prefix, func(k string) bool { return keep[k] })
}

// IndexFile reads one index file.
func (r *Repository) IndexFile(ctx context.Context, fileID id.ID) (*index.File, error) {
	plain, err := r.loadSealed(ctx, IndexKey(fileID))
	if err != nil {
		return nil, err
	}
	f, err := index.Decode(plain)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", IndexKey(fileID), err)
	}
	return f, nil
}

// LoadIndex reads every index file into the index, in parallel: into
// memory, or, when SetDiskIndex gave a directory and the index files are
// large enough, into an on-disk index there (diskindex.go). An index file
// whose stored bytes are damaged (IsDamage) is skipped and returned,
// sorted by key: the blobs only it names then look missing, and whoever
// deletes data must refuse (prune reads the index files itself and does).
// Any other failure to read one fails the call.
func (r *Repository) LoadIndex(ctx context.Context) (damaged []Damaged, err error) {
	objs, _, err := r.listRetaining(ctx, IndexPrefix)
	if err != nil {
		return nil, fmt.Errorf("listing index files: %w", err)
	}
	if r.wantsDiskIndex(objs) {
		damaged, err := r.loadIndexOnDisk(ctx, objs)
		if !errors.Is(err, errIndexDir) {
			return damaged, err
		}
		// The directory could not serve (full, read-only...): it only
		// saves memory, so read the index into memory instead.
	}
	damaged, err = r.readIndexFiles(ctx, entryIDs(objs), 8, r.addToIndex, func(id.ID) {})
	if err != nil {
		return nil, err
	}
	if r.cache != nil && len(damaged) == 0 {
		// Only a complete index says which cached packs are gone.
		packs, err := r.idx.Packs(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing the index's packs: %w", err)
		}
		r.retainCached(DataPrefix, packs, PackKey)
	}
	return damaged, nil
}

// readIndexFiles reads index files, limit at a time, giving each pack to
// add as it is decoded (its blobs slice is reused once add returns) and
// then the file's id to done. A file whose stored bytes are damaged is
// skipped (add sees none of its packs) and returned (see LoadIndex), and
// noted with the repository's damage log; add's error, or any other
// failure to read one, fails the call.
func (r *Repository) readIndexFiles(ctx context.Context, files []id.ID, limit int,
	add func(index.PackBlobs) error, done func(id.ID)) (damaged []Damaged, err error) {
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(limit)
	for _, fid := range files {
		g.Go(func() error {
			var addErr error
			err := r.walkIndexFile(gctx, fid, func(p index.PackBlobs) error {
				addErr = add(p)
				return addErr
			})
			switch {
			case addErr != nil:
				return addErr
			case err == nil:
				done(fid)
				return nil
			case IsDamage(err):
				mu.Lock()
				damaged = append(damaged, Damaged{Key: IndexKey(fid), Err: err})
				mu.Unlock()
				return nil
			default:
				return fmt.Errorf("loading index: %w", err)
			}
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	sortDamaged(damaged)
	r.noteDamaged(damaged)
	return damaged, nil
}

// walkIndexFile reads one index file, giving its packs to fn as it
// decodes them (index.Walk): unlike IndexFile it never holds the decoded
// file whole.
func (r *Repository) walkIndexFile(ctx context.Context, fileID id.ID, fn func(index.PackBlobs) error) error {
	plain, err := r.loadSealed(ctx, IndexKey(fileID))
	if err != nil {
		return err
	}
	// A damaged file gives nothing, as with IndexFile: check it all
	// before the first pack goes to fn (parsing costs little beside the
	// download and the decryption).
	if err := index.Walk(plain, func(index.PackBlobs) error { return nil }); err != nil {
		return fmt.Errorf("%s: %w", IndexKey(fileID), err)
	}
	return index.Walk(plain, fn)
}

// addToIndex adds a pack's blobs to the in-memory index.
func (r *Repository) addToIndex(p index.PackBlobs) error {
	r.idx.Add(p.ID, p.Blobs)
	return nil
}

// LoadBlob reads, decrypts and verifies one blob.
func (r *Repository) LoadBlob(ctx context.Context, blob id.ID) ([]byte, error) {
	return r.LoadBlobWith(ctx, nil, blob)
}

// LoadBlobWith is LoadBlob decoding with dec, into the buffers it reuses:
// the result is then valid until dec's next use (trees read from the cache
// are not). Restores use it for the chunks of large files; a nil dec
// decodes into fresh memory.
func (r *Repository) LoadBlobWith(ctx context.Context, dec *pack.Decoder, blob id.ID) ([]byte, error) {
	loc, ok, err := r.idx.Find(ctx, blob)
	if err != nil {
		return nil, fmt.Errorf("looking up blob %s: %w", blob.Short(), err)
	}
	if !ok {
		return nil, fmt.Errorf("%s: %w", blob, ErrBlobNotFound)
	}
	if r.cache != nil && loc.Type == pack.TreeBlob {
		if data, err := r.loadCachedBlob(ctx, loc, blob); err == nil {
			return data, nil
		}
		// Any trouble with the cached copy: read the blob from the store.
	}
	sealed, err := r.st.GetRange(ctx, PackKey(loc.Pack), int64(loc.Offset), int64(loc.Length))
	if err != nil {
		return nil, fmt.Errorf("blob %s in pack %s: %w", blob.Short(), loc.Pack.Short(), err)
	}
	if dec == nil {
		return r.codec.Decode(sealed, blob)
	}
	return dec.Decode(sealed, blob)
}

// loadCachedBlob reads a tree blob from the cached copy of its pack,
// downloading the whole pack into the cache first when it is not there:
// trees live in packs of their own, so one download serves every tree of
// the pack, now and in later runs.
func (r *Repository) loadCachedBlob(ctx context.Context, loc index.Location, blob id.ID) ([]byte, error) {
	key := PackKey(loc.Pack)
	sealed, err := r.cache.ReadRange(key, int64(loc.Offset), int64(loc.Length))
	if errors.Is(err, cache.ErrMiss) {
		sealed, err = r.fetchPack(ctx, loc)
	}
	if err != nil {
		return nil, err
	}
	data, err := r.codec.Decode(sealed, blob)
	if err != nil {
		r.cache.Remove(key)
		return nil, err
	}
	return data, nil
}

// fetchPack downloads a whole pack, checks it against its name, adds it to
// the cache and returns the bytes of loc.
func (r *Repository) fetchPack(ctx context.Context, loc index.Location) ([]byte, error) {
	key := PackKey(loc.Pack)
	r.packMu.Lock()
	defer r.packMu.Unlock()
	if sealed, err := r.cache.ReadRange(key, int64(loc.Offset), int64(loc.Length)); err == nil {
		return sealed, nil // another goroutine fetched it meanwhile
	}
	data, err := r.ReadPack(ctx, loc.Pack)
	if err != nil {
		return nil, err
	}
	if err := r.cache.Put(key, data); err != nil {
		return nil, err
	}
	return sealedBlob(data, loc.Entry)
}

// sealedBlob returns the sealed bytes of one blob of a whole
// pack, after checking that they lie inside it.
func sealedBlob(packData []byte, e pack.Entry) ([]byte, error) {
	end := int64(e.Offset) + int64(e.Length)
	if end > int64(len(packData)) {
		return nil, fmt.Errorf("blob %s: %w: beyond the end of its pack", e.ID.Short(), ErrCorrupt)
	}
	return packData[e.Offset:end], nil
}

// LoadTree reads and decodes a tree blob.
func (r *Repository) LoadTree(ctx context.Context, tid id.ID) (*tree.Tree, error) {
	data, err := r.LoadBlob(ctx, tid)
	if err != nil {
		return nil, err
	}
	t, err := tree.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("tree %s: %w", tid.Short(), err)
	}
	return t, nil
}

// onceErr keeps the first error of many goroutines.
type onceErr struct {
	mu  sync.Mutex
	err error
}

func (o *onceErr) set(err error) {
	o.mu.Lock()
	if o.err == nil {
		o.err = err
	}
	o.mu.Unlock()
}

func (o *onceErr) get() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}
