package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sentinel errors. Backends wrap them with %w; callers test them with errors.Is.
var (
	// ErrNotFound means the key does not exist. It is the only error that
	// means "absent": any other error leaves the key's state unknown.
	ErrNotFound = errors.New("not found")
	// ErrExists is returned by a create-if-absent Put when the key exists.
	ErrExists = errors.New("already exists")
	// ErrVersionMismatch is returned by a compare-and-swap Put when the key's
	// current version differs from the expected one (or the key is gone).
	ErrVersionMismatch = errors.New("version mismatch")
	// ErrUnsupported is returned when a caller asks for a conditional write
	// the store did not declare in its Capabilities.
	ErrUnsupported = errors.New("operation not supported by this store")
	// ErrInvalidKey is returned for keys that are empty, absolute, contain
	// "." or ".." elements, or elements starting with ".".
	ErrInvalidKey = errors.New("invalid key")
	// ErrTimeout means the store did not answer within its deadline (the
	// connect or response timeout): the server may be down or hung, and the
	// request's outcome is unknown.
	ErrTimeout = errors.New("store did not answer in time")
	// ErrTooLarge is returned by Get when the object is larger than the
	// caller's bound: what that kind of object may be. The error names the
	// key, the object's size when the store told it, and the bound.
	ErrTooLarge = errors.New("object too large")
	// ErrNotRegular is returned by a file system store (local disk, SFTP)
	// when a key names something other than a regular file: a symbolic
	// link, a FIFO, a device or a socket. Such a thing is never written by
	// a store, so it was put there by hand or by an attacker; it is never
	// read (a FIFO would block, a device never end). Directories are not
	// objects and read as ErrNotFound.
	ErrNotRegular = errors.New("not a regular file")
	// ErrNotDirectory is returned by a file system store's List when a
	// directory of keys below the store's root (such as snapshots/ or
	// data/ab/) is a symbolic link or not a directory at all: listing it as
	// empty would hide every object the user expects there.
	ErrNotDirectory = errors.New("not a directory")
	// ErrChanged is returned by a stream (RangeOpener) that had to reopen
	// its object, after a dropped connection, and found it changed:
	// another size, time or version than when the stream was opened. Its
	// later bytes would not continue the earlier ones, so none are read.
	ErrChanged = errors.New("object changed while it was read")
)

// Default deadlines of store requests (the CLI's -store-connect-timeout and
// -store-response-timeout).
const (
	// DefaultConnectTimeout bounds a TCP connect plus the TLS or SSH
	// handshake.
	DefaultConnectTimeout = 10 * time.Second
	// DefaultResponseTimeout bounds the wait for a server's answer once a
	// request has been sent (HTTP response headers; an SSH keepalive).
	DefaultResponseTimeout = 30 * time.Second
)

// Capabilities declares which atomic conditional writes a store performs.
// The lock uses them when present and falls back to write-then-verify when
// absent; a store must never claim a capability it cannot honour atomically.
type Capabilities struct {
	// CreateIfAbsent: Put with PutOptions.IfAbsent atomically fails with
	// ErrExists when the key exists, even against concurrent writers.
	CreateIfAbsent bool
	// CompareAndSwap: Put with PutOptions.IfVersion atomically replaces the
	// object only when its current version equals the given one, else
	// fails with ErrVersionMismatch.
	CompareAndSwap bool
}

// ObjectInfo describes a stored object.
type ObjectInfo struct {
	Key  string
	Size int64
	// ModTime is the store's own time of the last write (file mtime,
	// S3 LastModified). It comes from the store's clock, not ours. Zero when
	// the store cannot tell.
	ModTime time.Time
	// Version identifies the exact content of this write (S3 ETag, a content
	// hash on local disk). Pass it to PutOptions.IfVersion for compare-and-swap.
	// Empty when the store cannot tell. In a List it may be coarser: the
	// local store then gives inode, mtime and size without reading the
	// object, which a compare-and-swap refuses (ErrVersionMismatch), so a
	// version meant for IfVersion must come from Put or Stat.
	Version string
}

// PutOptions make a Put conditional. At most one of IfAbsent and IfVersion
// may be set.
type PutOptions struct {
	// IfAbsent creates the object only if the key does not exist
	// (requires Capabilities.CreateIfAbsent; else ErrUnsupported).
	IfAbsent bool
	// IfVersion replaces the object only if its current Version equals this
	// (requires Capabilities.CompareAndSwap; else ErrUnsupported).
	IfVersion string
}

// Store is the interface every backend implements. All methods are safe for
// concurrent use. Writes are atomic: a reader sees either the old object or
// the complete new one, never a partial write.
type Store interface {
	// Capabilities reports the atomic conditional writes this store supports.
	Capabilities() Capabilities
	// Get returns the whole object if it is at most max bytes long.
	// A larger object fails with ErrTooLarge (wrapped, naming key):
	// before its content is read where the store learns the size first
	// (file size, Content-Length), and never after reading more than
	// max+1 bytes. max is the largest object of that kind the caller
	// accepts (see ReadLimited); it must not be negative.
	Get(ctx context.Context, key string, max int64) ([]byte, error)
	// GetRange returns length bytes starting at offset. Reading past the end
	// of the object is an error (the object is shorter than the caller thinks).
	GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error)
	// Put writes the object, replacing any existing one unless opts say
	// otherwise. The returned info has at least Key and Size; ModTime and
	// Version are filled in where the store reports them cheaply.
	Put(ctx context.Context, key string, data []byte, opts PutOptions) (ObjectInfo, error)
	// Delete removes the object. Deleting a missing key returns ErrNotFound.
	Delete(ctx context.Context, key string) error
	// Stat returns the object's info without its content.
	Stat(ctx context.Context, key string) (ObjectInfo, error)
	// List calls fn for every object whose key starts with prefix, in no
	// particular order. A prefix ending in "/" lists a "directory"; an empty
	// prefix lists everything. If fn returns an error, List stops and
	// returns it.
	List(ctx context.Context, prefix string, fn func(ObjectInfo) error) error
	// Now returns a lower bound of the store's own clock at the moment the
	// call returns (an HTTP Date header, the mtime of a file just written):
	// the lock judges expiry by the store's clock, never by ours.
	Now(ctx context.Context) (time.Time, error)
	// Close releases connections and other resources.
	Close() error
}

// TempCleaner is implemented by stores that write through temporary files
// a crash can leave behind (local disk, SFTP). Such files are invisible to
// Get and List; prune removes old ones.
type TempCleaner interface {
	// RemoveStaleTemp deletes the store's temporary files last modified
	// before cutoff (by the store's clock) and returns how many it removed.
	RemoveStaleTemp(ctx context.Context, cutoff time.Time) (int, error)
}

// Describer is implemented by stores that can name themselves for messages,
// e.g. "local:./backup_store" or "s3:bucket/prefix".
type Describer interface {
	Describe() string
}

// IfPresentDeleter is implemented by stores for which Delete costs a
// request more because it reports a missing key: S3's DeleteObject
// succeeds whether the key exists, so its Delete asks HeadObject first.
// DeleteIfPresent deletes key and says nothing of whether it existed.
// Callers that treat a missing key as deleted use DeleteAbsentOK.
type IfPresentDeleter interface {
	DeleteIfPresent(ctx context.Context, key string) error
}

// DeleteAbsentOK deletes key from s, a missing key being no error: with
// one request where s implements IfPresentDeleter, else Delete with
// ErrNotFound ignored.
func DeleteAbsentOK(ctx context.Context, s Store, key string) error {
	if d, ok := s.(IfPresentDeleter); ok {
		return d.DeleteIfPresent(ctx, key)
	}
	if err := s.Delete(ctx, key); err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	return nil
}

// RequestCoster is implemented by stores that declare what one request
// costs beyond the bytes it moves, as the number of bytes that could be
// moved in that time. Readers use it to choose between one larger read
// that covers bytes they do not need and several smaller ones: a restore
// reads over a gap between the blobs it needs when the gap is smaller.
// The cost is declared by the kind of store, not measured.
type RequestCoster interface {
	RequestCost() int64
}

// Declared request costs.
const (
	// LocalRequestCost is a local disk's: an open, a read and a close
	// cost about what copying 64 KiB from the page cache does.
	LocalRequestCost = 64 << 10
	// RemoteRequestCost is a store across a network's (S3, B2, SFTP):
	// a round trip of 20-80 ms moves several megabytes at 1 Gbit/s.
	RemoteRequestCost = 4 << 20
)

// RequestCost returns what s declares a request costs (RequestCoster),
// LocalRequestCost for a store that declares nothing.
func RequestCost(s Store) int64 {
	if c, ok := s.(RequestCoster); ok {
		return c.RequestCost()
	}
	return LocalRequestCost
}

// Describe names s for error messages.
func Describe(s Store) string {
	if d, ok := s.(Describer); ok {
		return d.Describe()
	}
	return fmt.Sprintf("%T", s)
}

// CheckKey returns ErrInvalidKey (wrapped, naming the key) unless key is a
// clean relative slash-separated path whose elements do not start with ".".
func CheckKey(key string) error {
	if key == "" || strings.HasPrefix(key, "/") || strings.HasSuffix(key, "/") {
		return fmt.Errorf("%w: %q", ErrInvalidKey, key)
	}
	for _, elem := range strings.Split(key, "/") {
		if elem == "" || strings.HasPrefix(elem, ".") || strings.ContainsRune(elem, 0) || strings.ContainsRune(elem, '\\') {
			return fmt.Errorf("%w: %q", ErrInvalidKey, key)
		}
	}
	return nil
}

// CheckPutOptions validates opts against caps, returning ErrUnsupported or
// an error for contradictory options.
func CheckPutOptions(caps Capabilities, opts PutOptions) error {
	if opts.IfAbsent && opts.IfVersion != "" {
		return errors.New("store: IfAbsent and IfVersion are mutually exclusive")
	}
	if opts.IfAbsent && !caps.CreateIfAbsent {
		return fmt.Errorf("create-if-absent: %w", ErrUnsupported)
	}
	if opts.IfVersion != "" && !caps.CompareAndSwap {
		return fmt.Errorf("compare-and-swap: %w", ErrUnsupported)
	}
	return nil
}

// RangeReader is implemented by stores that can read a range of an object
// into a caller's buffer. A restore reads every byte of its data through a
// few such buffers instead of a fresh allocation per read (which the kernel
// zeroes and the collector frees again). Wrappers forward it to their inner
// store through ReadRangeInto, or do not declare it.
type RangeReader interface {
	// ReadRange fills buf with the len(buf) bytes of key at offset. As
	// with GetRange, a missing key is ErrNotFound and reading past the end
	// of the object is another error; on error buf's contents are
	// undefined.
	ReadRange(ctx context.Context, key string, offset int64, buf []byte) error
}

// ReadRangeInto fills buf with the len(buf) bytes of key at offset: with
// ReadRange when s is a RangeReader, else with GetRange and a copy.
func ReadRangeInto(ctx context.Context, s Store, key string, offset int64, buf []byte) error {
	if rr, ok := s.(RangeReader); ok {
		return rr.ReadRange(ctx, key, offset, buf)
	}
	data, err := s.GetRange(ctx, key, offset, int64(len(buf)))
	if err != nil {
		return err
	}
	if len(data) != len(buf) {
		return fmt.Errorf("%s: range %d+%d: got %d bytes", key, offset, len(buf), len(data))
	}
	copy(buf, data)
	return nil
}

// GetRangeByReading is GetRange for a store that reads ranges into
// buffers: a fresh buffer of length bytes, filled by rr.ReadRange. A
// negative length is an error naming key.
func GetRangeByReading(ctx context.Context, rr RangeReader, key string, offset, length int64) ([]byte, error) {
	if length < 0 {
		return nil, fmt.Errorf("%s: invalid range %d+%d", key, offset, length)
	}
	buf := make([]byte, length)
	if err := rr.ReadRange(ctx, key, offset, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

// ReadRangeBuffer returns length bytes of key at offset, read into buf
// (grown when too small) when s is a RangeReader, else the slice GetRange
// returns. Either way the result is valid only until buf's next use.
func ReadRangeBuffer(ctx context.Context, s Store, key string, offset, length int64, buf []byte) ([]byte, error) {
	rr, ok := s.(RangeReader)
	if !ok {
		return s.GetRange(ctx, key, offset, length)
	}
	if length < 0 {
		return nil, fmt.Errorf("%s: invalid range %d+%d", key, offset, length)
	}
	if int64(cap(buf)) < length {
		buf = make([]byte, length)
	}
	buf = buf[:length]
	if err := rr.ReadRange(ctx, key, offset, buf); err != nil {
		return nil, err
	}
	return buf, nil
}
