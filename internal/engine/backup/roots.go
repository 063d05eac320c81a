package backup

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/cloudstic/cloudstic/internal/repo/tree"
	"github.com/cloudstic/cloudstic/internal/source"
	"github.com/cloudstic/cloudstic/internal/source/local"
)

// ErrManyRoots means Options.Paths was given with a source other than the
// local file system.
var ErrManyRoots = errors.New("several roots are only supported on the local file system")

// ErrManyRootsWindows means Options.Paths was given on Windows, where an
// absolute path starts with a drive or a share, not with the "/" that a
// snapshot of several roots is stored under.
var ErrManyRootsWindows = errors.New("several roots are not supported on Windows: back up each directory on its own")

// roots are the resolved roots of a backup: the tree's root, and with
// several roots (Options.Paths) the directories on the way to them.
type roots struct {
	root source.Root
	// paths are the roots of Options.Paths as stored (absolute, their
	// parent directories' symlinks resolved, sorted, none below
	// another); nil for one directory.
	paths []string
	// selected lists, for each directory on the way from "/" to the
	// roots, the names of the entries stored: the next directory on the
	// way, or a root. Other directories are read whole.
	selected map[string][]string
	// infos are the roots' lstat metadata (their devices are those
	// -one-file-system stays on).
	infos []fs.FileInfo
}

// resolveRoots resolves opts.Path, or opts.Paths when set. Several roots
// are stored under their absolute paths, as restic stores its targets:
// the tree's root is "/", and every directory on the way to a root holds
// only the entries on the way, with their own metadata.
func resolveRoots(ctx context.Context, opts *Options) (roots, error) {
	if len(opts.Paths) == 0 {
		root, err := opts.Source.Root(ctx, opts.Path)
		if err != nil {
			return roots{}, fmt.Errorf("%w: %w", ErrSource, err)
		}
		return roots{root: root}, nil
	}
	if _, ok := opts.Source.(local.Source); !ok {
		return roots{}, fmt.Errorf("%w: %w", ErrSource, ErrManyRoots)
	}
	if runtime.GOOS == "windows" {
		return roots{}, fmt.Errorf("%w: %w", ErrSource, ErrManyRootsWindows)
	}
	var rs roots
	for _, p := range opts.Paths {
		t, fi, err := resolveTarget(ctx, opts.Source, p)
		if err != nil {
			return roots{}, fmt.Errorf("%w: %w", ErrSource, err)
		}
		rs.paths = append(rs.paths, t)
		rs.infos = append(rs.infos, fi)
	}
	rs.paths, rs.infos = outermost(rs.paths, rs.infos)
	rootInfo, err := opts.Source.Lstat(ctx, "/")
	if err != nil {
		return roots{}, fmt.Errorf("%w: %w", ErrSource, err)
	}
	rs.root = source.Root{Path: "/", Real: "/", URI: "local:/", Info: rootInfo}
	if slices.Equal(rs.paths, []string{"/"}) {
		return rs, nil
	}
	rs.selected = map[string][]string{}
	for _, t := range rs.paths {
		dir := "/"
		for _, name := range strings.Split(strings.TrimPrefix(t, "/"), "/") {
			if !slices.Contains(rs.selected[dir], name) {
				rs.selected[dir] = append(rs.selected[dir], name)
			}
			dir = filepath.Join(dir, name)
		}
	}
	for _, names := range rs.selected {
		slices.Sort(names)
	}
	return rs, nil
}

// resolveTarget makes p absolute with the symlinks of its parent
// directories resolved (p itself, if a symlink, is stored as one), and
// checks that it exists.
func resolveTarget(ctx context.Context, src source.Source, p string) (string, fs.FileInfo, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", nil, err
	}
	if abs != "/" {
		dir, err := filepath.EvalSymlinks(filepath.Dir(abs))
		if err != nil {
			return "", nil, err
		}
		abs = filepath.Join(dir, filepath.Base(abs))
	}
	fi, err := src.Lstat(ctx, abs)
	if err != nil {
		return "", nil, err
	}
	return abs, fi, nil
}

// outermost sorts paths, and drops duplicates and those inside another
// (stored with it), with their infos.
func outermost(paths []string, infos []fs.FileInfo) ([]string, []fs.FileInfo) {
	idx := make([]int, len(paths))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return strings.Compare(paths[a], paths[b]) })
	var keptPaths []string
	var keptInfos []fs.FileInfo
	for _, i := range idx {
		p := paths[i]
		if n := len(keptPaths); n > 0 {
			last := keptPaths[n-1]
			if p == last || last == "/" || strings.HasPrefix(p, last+"/") {
				continue
			}
		}
		keptPaths, keptInfos = append(keptPaths, p), append(keptInfos, infos[i])
	}
	return keptPaths, keptInfos
}

// readSelected captures the entries names of the directory path, one on
// the way to the roots: the next directory on the way, or a root. An entry
// that cannot be read is recorded as an error and left out.
func (w *walker) readSelected(path string, names []string, parent map[string]*tree.Node) []tree.Node {
	if w.opts.Progress != nil {
		w.opts.Progress.Dirs.Add(1)
	}
	nodes := make([]tree.Node, 0, len(names))
	for _, name := range names {
		child := filepath.Join(path, name)
		fi, err := w.src.Lstat(w.ctx, child)
		if err != nil {
			w.entryErr(fmt.Errorf("%s: %w", child, err))
			continue
		}
		node, err := w.nodeSince(child, fi, parent[name])
		if err != nil {
			w.entryErr(err)
			continue
		}
		nodes = append(nodes, node)
	}
	return nodes
}
