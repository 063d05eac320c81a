package cloud

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cloudstic/cloudstic/internal/source"
)

// ErrNotScanned means the tree was read before Scan listed it.
var ErrNotScanned = errors.New("cloud drive read before it was listed")

// ErrNotFile means Open was given a folder or a shortcut.
var ErrNotFile = errors.New("not a file")

// Provider is what one drive service (Google Drive, Microsoft Graph) gives
// Source.
type Provider interface {
	// Resolve finds the folder name names (a slash-separated path below
	// the drive's root, "" or "/" for the root) and the drive's identity;
	// uri is the source as snapshots name it.
	Resolve(ctx context.Context, name string) (root source.Item, id source.Identity, uri string, err error)
	// Full lists every item below the root (items elsewhere may come
	// too). With withToken, token is where the change feed stood before
	// the listing began.
	Full(ctx context.Context, withToken bool) (items []source.Item, token string, err error)
	// Folder lists the items directly in the folder id.
	Folder(ctx context.Context, id string) ([]source.Item, error)
	// Changes reads the change feed since token to its end; a token the
	// drive refuses is source.ErrTokenExpired.
	Changes(ctx context.Context, token string) (Changes, error)
	// Open downloads the content of it from byte offset on.
	Open(ctx context.Context, it source.Item, offset int64) (io.ReadCloser, error)
	// Suffix is the extension an item is stored under beyond its name
	// (".docx" for a Google document exported to Word); "" for most.
	Suffix(it source.Item) string
	// Exported says whether the item's bytes are an export (no size or
	// checksum known before the download).
	Exported(it source.Item) bool
}

// Changes is what a change feed reported: items created or changed
// (whole), ids removed (deleted, trashed, or no longer visible) and the
// token to read the next changes from.
type Changes struct {
	Upserts []source.Item
	Removed []string
	Token   string
}

// Source is a source.Drive over a Provider. Root resolves the folder,
// Scan lists it; the other methods answer from that listing.
type Source struct {
	p Provider

	mu    sync.Mutex
	root  source.Item
	id    source.Identity
	uri   string
	nodes map[string]*node // by path, "/" for the root
}

var _ source.Drive = (*Source)(nil)

// New returns a source reading through p.
func New(p Provider) *Source { return &Source{p: p} }

// Root resolves the folder name names below the drive's root.
func (s *Source) Root(ctx context.Context, name string) (source.Root, error) {
	root, id, uri, err := s.p.Resolve(ctx, name)
	if err != nil {
		return source.Root{}, err
	}
	if !root.Dir {
		return source.Root{}, fmt.Errorf("%s: %w", uri, source.ErrNotDir)
	}
	s.mu.Lock()
	s.root, s.id, s.uri = root, id, uri
	s.mu.Unlock()
	rn := &node{item: root, name: "/", path: "/"}
	return source.Root{Path: "/", Real: "/", URI: uri, Info: rn.info(s.p)}, nil
}

// Identity tells which folder Root resolved.
func (s *Source) Identity() source.Identity {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id
}

// Scan lists the tree (see source.Drive).
func (s *Source) Scan(ctx context.Context, since *source.Since) (source.ScanResult, error) {
	s.mu.Lock()
	root, id := s.root, s.id
	s.mu.Unlock()
	if root.ID == "" {
		return source.ScanResult{}, ErrNotScanned
	}
	var res source.ScanResult
	var m *Model
	if id.Changes && since != nil && since.Token != "" {
		var err error
		m, res, err = s.incremental(ctx, since)
		if err != nil {
			return source.ScanResult{}, err
		}
	}
	if m == nil {
		items, token, err := s.p.Full(ctx, id.Changes)
		if err != nil {
			return source.ScanResult{}, err
		}
		m = NewModel(items)
		res.Token, res.Changes = token, -1
	}
	m.Put(root) // as resolved just now
	nodes := build(m, root, s.p)
	s.mu.Lock()
	s.nodes = nodes
	s.mu.Unlock()
	return res, nil
}

// incremental applies the changes since since.Token to since.Items. It
// returns a nil model, and the reason, when the token is refused. A
// folder the snapshot did not hold that the changes bring into the tree
// (moved in from outside the root, or from an excluded folder) is listed
// whole: the feed reports the folder, not its unchanged contents.
func (s *Source) incremental(ctx context.Context, since *source.Since) (*Model, source.ScanResult, error) {
	ch, err := s.p.Changes(ctx, since.Token)
	if errors.Is(err, source.ErrTokenExpired) {
		return nil, source.ScanResult{FullScanReason: err}, nil
	}
	if err != nil {
		return nil, source.ScanResult{}, err
	}
	m := NewModel(since.Items)
	var newDirs []string
	for _, id := range ch.Removed {
		m.Remove(id)
	}
	for _, it := range ch.Upserts {
		if it.Dir && !m.Has(it.ID) {
			newDirs = append(newDirs, it.ID)
		}
		m.Put(it)
	}
	listed := map[string]bool{}
	for len(newDirs) > 0 {
		dir := newDirs[len(newDirs)-1]
		newDirs = newDirs[:len(newDirs)-1]
		if listed[dir] {
			continue
		}
		listed[dir] = true
		kids, err := s.p.Folder(ctx, dir)
		if err != nil {
			return nil, source.ScanResult{}, fmt.Errorf("listing folder %s, new to this backup: %w", dir, err)
		}
		for _, k := range kids {
			m.Put(k)
			if k.Dir {
				newDirs = append(newDirs, k.ID)
			}
		}
	}
	return m, source.ScanResult{Token: ch.Token, Changes: len(ch.Upserts) + len(ch.Removed)}, nil
}

// lookup returns the node at p, a path as the walk gives it.
func (s *Source) lookup(p string) (*node, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.nodes == nil {
		return nil, ErrNotScanned
	}
	n, ok := s.nodes[path.Clean("/"+filepath.ToSlash(p))]
	if !ok {
		return nil, fs.ErrNotExist
	}
	return n, nil
}

// Lstat describes the entry at p.
func (s *Source) Lstat(_ context.Context, p string) (fs.FileInfo, error) {
	n, err := s.lookup(p)
	if err != nil {
		return nil, err
	}
	return n.info(s.p), nil
}

// ReadDir lists the folder at p, sorted by name.
func (s *Source) ReadDir(_ context.Context, p string) ([]fs.DirEntry, error) {
	n, err := s.lookup(p)
	if err != nil {
		return nil, err
	}
	if !n.item.Dir {
		return nil, fmt.Errorf("%s: %w", p, source.ErrNotDir)
	}
	out := make([]fs.DirEntry, len(n.kids))
	for i, k := range n.kids {
		out[i] = fs.FileInfoToDirEntry(k.info(s.p))
	}
	return out, nil
}

// Open downloads the file at p as it is read.
func (s *Source) Open(ctx context.Context, p string) (source.File, error) {
	n, err := s.lookup(p)
	if err != nil {
		return nil, err
	}
	if n.item.Dir || n.link {
		return nil, fmt.Errorf("%s: %w", p, ErrNotFile)
	}
	return newFile(ctx, s.p, n), nil
}

// Readlink returns a shortcut's target (see build).
func (s *Source) Readlink(_ context.Context, p string) (string, error) {
	n, err := s.lookup(p)
	if err != nil {
		return "", err
	}
	if !n.link {
		return "", fmt.Errorf("%s: not a shortcut", p)
	}
	return n.target, nil
}

// Xattrs returns none.
func (s *Source) Xattrs(context.Context, string) ([]source.Xattr, error) { return nil, nil }

// TimeGranularity is a millisecond: both drives give times in them.
func (s *Source) TimeGranularity() time.Duration { return time.Millisecond }

// Close does nothing: the HTTP client's connections are pooled.
func (s *Source) Close() error { return nil }

// shortcutMIME is the media type of a Google Drive shortcut.
const shortcutMIME = "application/vnd.google-apps.shortcut"

// IsShortcut says whether it is a shortcut (recorded as a symlink).
func IsShortcut(it source.Item) bool { return it.MIME == shortcutMIME }

// ShortcutMIME is the media type providers give shortcuts.
const ShortcutMIME = shortcutMIME

// relTarget is the target of a shortcut at linkPath (a path of the tree)
// to the item at targetPath: relative, so that a restored tree's link
// points into itself.
func relTarget(linkPath, targetPath string) string {
	rel, err := filepath.Rel(filepath.FromSlash(path.Dir(linkPath)), filepath.FromSlash(targetPath))
	if err != nil {
		return targetPath
	}
	return strings.ReplaceAll(filepath.ToSlash(rel), "\\", "/")
}
