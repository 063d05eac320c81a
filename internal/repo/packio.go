package repo

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"

	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/index"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
	"github.com/cloudstic/cloudstic/internal/store"
)

// Pack I/O: the engine reads packs only through these methods (and
// LoadBlob, LoadTree), never from the store by key: the repository knows
// where a pack lies, how large it may be and how to check it.

// DescribePack names pack p in messages and reports (check's findings):
// its store key, data/<2 hex>/<id>. Nothing outside this package reads or
// writes a pack by that name.
func DescribePack(p id.ID) string { return PackKey(p) }

// MaxPackSize is the bound of every read of a whole pack of this
// repository: the largest pack a writer makes with the config's pack size
// (see pack.MaxSize; 181 MiB for the default 16 MiB packs).
func (r *Repository) MaxPackSize() int64 { return pack.MaxSize(r.cfg.PackSize) }

// ReadPack reads a whole pack, at most MaxPackSize bytes of it, and checks
// that its content hashes to its name: an error wrapping ErrCorrupt when
// it does not.
func (r *Repository) ReadPack(ctx context.Context, packID id.ID) ([]byte, error) {
	data, err := r.readWholePack(ctx, packID)
	if err != nil {
		return nil, err
	}
	if sha256.Sum256(data) != packID {
		return nil, fmt.Errorf("%s: %w: content does not match its name", PackKey(packID), ErrCorrupt)
	}
	return data, nil
}

// readWholePack reads a whole pack, at most MaxPackSize bytes of it,
// without checking it.
func (r *Repository) readWholePack(ctx context.Context, packID id.ID) ([]byte, error) {
	return r.st.Get(ctx, PackKey(packID), r.MaxPackSize())
}

// PackVerification is what VerifyPack found in one whole pack.
type PackVerification struct {
	// Size is how many bytes of the pack were read.
	Size int64
	// NameMismatch: the pack's content does not hash to its name.
	NameMismatch bool
	// Header lists the blobs the pack's own header names. Nil when
	// HeaderErr says why it could not be read; the blobs were then not
	// checked.
	Header    []pack.Entry
	HeaderErr error
	// BadBlobs counts the entries given that do not lie in the pack,
	// decrypt or hash to their ids; FirstBadBlob is the first one's error.
	BadBlobs     int
	FirstBadBlob error
}

// VerifyPack reads a whole pack and checks everything about it (check
// -read-data): its content against its name, its own header, and that each
// of entries (the index's view of the pack) decrypts and hashes to its id.
// A pack that fails some check is still checked for the rest, so that a
// report can say all that is wrong with it. The error is set only when the
// pack could not be read at all.
func (r *Repository) VerifyPack(ctx context.Context, packID id.ID, entries []pack.Entry) (*PackVerification, error) {
	data, err := r.readWholePack(ctx, packID)
	if err != nil {
		return nil, err
	}
	n := int64(len(data))
	v := &PackVerification{Size: n, NameMismatch: sha256.Sum256(data) != packID}
	if v.Header, v.HeaderErr = r.parseHeader(packID, data); v.HeaderErr != nil {
		return v, nil
	}
	for _, e := range entries {
		if _, err := r.DecodeBlobFromPack(data, e); err != nil {
			v.BadBlobs++
			if v.FirstBadBlob == nil {
				v.FirstBadBlob = err
			}
		}
	}
	return v, nil
}

// parseHeader returns the entries the header at the end of a whole pack's
// bytes names.
func (r *Repository) parseHeader(packID id.ID, data []byte) ([]pack.Entry, error) {
	n := int64(len(data))
	if n < 4 {
		return nil, fmt.Errorf("%w: %d bytes", pack.ErrCorrupt, n)
	}
	hl, err := pack.HeaderLength(data[n-4:], n)
	if err != nil {
		return nil, err
	}
	return pack.ParseHeader(r.key, data[n-4-hl:n-4], n-4-hl)
}

// ReadPackHeader reads the entries of a pack of size bytes from its own
// header (check, prune and repair must not trust the index alone). Its
// first request reads the pack's tail: the 4-byte header length and a
// header of expect blobs (pack.DefaultHeaderBlobs when expect is 0). When
// the header fits in it, as it does whenever the pack holds no more blobs
// than expected, that is its only request; otherwise a second one reads
// the header. Check knows from the index how many blobs each pack holds,
// so a pack that agrees with the index costs one request, not two: over
// a network, half the round trips of a check of millions of packs.
func (r *Repository) ReadPackHeader(ctx context.Context, packID id.ID, size int64, expect int) ([]pack.Entry, error) {
	key := PackKey(packID)
	if size < 4 {
		return nil, fmt.Errorf("%s: %w: %d bytes", key, pack.ErrCorrupt, size)
	}
	if expect <= 0 {
		expect = pack.DefaultHeaderBlobs
	}
	tailLen := min(pack.HeaderSize(min(expect, pack.MaxEntries))+4, size)
	tail, err := r.st.GetRange(ctx, key, size-tailLen, tailLen)
	if err != nil {
		return nil, err
	}
	if int64(len(tail)) != tailLen {
		return nil, fmt.Errorf("%s: %w: read %d of the last %d bytes", key, pack.ErrCorrupt, len(tail), tailLen)
	}
	n, err := pack.HeaderLength(tail[tailLen-4:], size)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	var hdr []byte
	if n+4 <= tailLen {
		hdr = tail[tailLen-4-n : tailLen-4]
	} else if hdr, err = r.st.GetRange(ctx, key, size-4-n, n); err != nil {
		return nil, err
	}
	entries, err := pack.ParseHeader(r.key, hdr, size-4-n)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return entries, nil
}

// DecodeBlobFromPack extracts and verifies one blob from a whole pack's bytes.
func (r *Repository) DecodeBlobFromPack(packData []byte, e pack.Entry) ([]byte, error) {
	sealed, err := sealedBlob(packData, e)
	if err != nil {
		return nil, err
	}
	return r.codec.Decode(sealed, e.ID)
}

// ReadPackRange reads length bytes of pack packID at offset into buf,
// grown when it is too small, and returns them: valid until buf's next
// use. A restore reads every byte of its data this way, through a few
// buffers per worker, and decrypts the blobs in them in place.
func (r *Repository) ReadPackRange(ctx context.Context, packID id.ID, offset, length int64, buf []byte) ([]byte, error) {
	data, err := store.ReadRangeBuffer(ctx, r.st, PackKey(packID), offset, length, buf)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) != length {
		return nil, fmt.Errorf("short read of pack %s", packID.Short())
	}
	return data, nil
}

// OpenPackRange streams length bytes of pack packID at offset
// (store.OpenRange): a restore from a store across a network reads a run
// of a pack's chunks this way, decoding each chunk as it arrives, in one
// request however long the run. The caller verifies what it reads.
func (r *Repository) OpenPackRange(ctx context.Context, packID id.ID, offset, length int64) (io.ReadCloser, error) {
	return store.OpenRange(ctx, r.st, PackKey(packID), offset, length)
}

// LoadTreeAt reads tree tid from where loc, an entry of an index other
// than the repository's own, says it lies, straight from the store (prune
// reads trees through the index it builds from the files it read). Errors
// reading it are the store's; those of a tree that does not decrypt,
// decode or hash to its id say so (IsDamage holds for them).
func (r *Repository) LoadTreeAt(ctx context.Context, tid id.ID, loc index.Location) (*tree.Tree, error) {
	sealed, err := r.st.GetRange(ctx, PackKey(loc.Pack), int64(loc.Offset), int64(loc.Length))
	if err != nil {
		return nil, err
	}
	data, err := r.codec.Decode(sealed, tid)
	if err != nil {
		return nil, err
	}
	t, err := tree.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("tree %s: %w", tid.Short(), err)
	}
	return t, nil
}
