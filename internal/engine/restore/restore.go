package restore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync/atomic"

	"github.com/cloudstic/cloudstic/internal/engine/fsmeta"
	"github.com/cloudstic/cloudstic/internal/engine/treewalk"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// Output formats.
const (
	FormatDir = "dir"
	FormatZip = "zip"
)

// ErrDamaged means some files could not be restored because their data is
// missing or corrupt; Result.Damaged names them.
var ErrDamaged = errors.New("some files could not be restored")

// ErrPathNotFound means -path names nothing in the snapshot.
var ErrPathNotFound = errors.New("path not found in snapshot")

// ErrVerify means files read back after the restore do not hash to the
// snapshot's content; Result.VerifyFailed names them.
var ErrVerify = errors.New("restored files differ from the snapshot")

// ErrBadOptions means Options combine settings that cannot work together
// (say -delete with -include), or name an unknown mode.
var ErrBadOptions = errors.New("invalid restore options")

// Overwrite says what a directory restore does with an entry already at a
// path the snapshot also has.
type Overwrite string

// Overwrite modes (restic 0.17's names).
const (
	// OverwriteNever leaves every existing entry alone (the default).
	OverwriteNever Overwrite = "never"
	// OverwriteAlways replaces every existing entry.
	OverwriteAlways Overwrite = "always"
	// OverwriteIfChanged keeps an existing file of the snapshot's size
	// and modification time (and a symlink with its target), giving it
	// the snapshot's metadata, and replaces anything else.
	OverwriteIfChanged Overwrite = "if-changed"
	// OverwriteIfNewer replaces an existing entry only when the
	// snapshot's modification time is later than its own.
	OverwriteIfNewer Overwrite = "if-newer"
)

// ParseOverwrite checks an -overwrite value; "" is OverwriteNever.
func ParseOverwrite(s string) (Overwrite, error) {
	switch o := Overwrite(s); o {
	case "":
		return OverwriteNever, nil
	case OverwriteNever, OverwriteAlways, OverwriteIfChanged, OverwriteIfNewer:
		return o, nil
	}
	return "", fmt.Errorf("%w: -overwrite %q: want always, if-changed, if-newer or never", ErrBadOptions, s)
}

// Options configure a restore.
type Options struct {
	Output string
	Format string // FormatDir or FormatZip
	// Path restricts the restore to one file ("a/b.txt") or directory
	// ("a/dir/"), relative to the snapshot root. Empty: everything.
	Path    string
	DryRun  bool
	Workers int
	Warnf   func(format string, args ...any)
	// RootMeta is the metadata of the snapshot's source directory. A
	// directory restore of the whole snapshot gives it to the output
	// directory, when the restore created that directory (an existing
	// directory of the user's keeps its own).
	RootMeta *tree.Node
	// Progress, when set, is updated as files are written.
	Progress *Progress

	// Include and Exclude are patterns in gitignore syntax (those of
	// backup's -exclude), matched against paths relative to the snapshot
	// root. With Include only matching entries (and everything below a
	// matching directory) are restored, with the directories leading to
	// them; an entry Exclude matches is left out, with all below it.
	Include, Exclude []string
	// Overwrite is what a directory restore does with existing entries;
	// "" is OverwriteNever.
	Overwrite Overwrite
	// Delete removes from each restored directory what the snapshot does
	// not have there, so that the output matches it. It never touches
	// anything outside the restored tree (with Path, outside that
	// subtree), and cannot be combined with Include or Exclude.
	Delete bool
	// Verify reads every written file back after the restore and checks
	// it against the snapshot's content hashes.
	Verify bool
	// NoSparse writes runs of zeros as data instead of leaving holes.
	NoSparse bool
	// NoSetuid, NoDevices and NoCapabilities withhold what gives
	// privileges when root restores it: the setuid and setgid bits of
	// regular files, device nodes, security.capability attributes
	// (fsmeta.WriterOptions). Result.Privileges counts what was restored
	// and what was withheld.
	NoSetuid, NoDevices, NoCapabilities bool
	// Within, when set, confines the restore to that directory: Output is
	// then relative to it, and no step of the restore leaves it, even when
	// a directory on the way to Output is replaced by a symbolic link while
	// the restore runs (the dashboard's -restore-root). A dry run, which
	// writes nothing, does not take it.
	Within *os.Root

	// beforeVerify, for tests, runs between the writes and the
	// verification.
	beforeVerify func()
	// segmentSize, for tests, replaces the segment size of large files
	// (segmentSize) when positive.
	segmentSize int64
	// probe, for tests, replaces hostProbe, which looks at how the
	// output's file system compares names.
	probe foldProbe
}

// Progress holds live counters.
type Progress struct {
	Files, Bytes atomic.Int64
}

// Result counts what was restored.
type Result struct {
	Files, Dirs, Symlinks, Specials, Hardlinks int64
	Bytes                                      int64
	Skipped                                    []string // existing files left alone (those -overwrite kept are not warned about)
	Damaged                                    []string // files that could not be restored
	// Replaced counts the existing entries that were overwritten (they
	// are also counted as Files, Symlinks...); Unchanged those left as
	// they were because they match (-overwrite if-changed).
	Replaced, Unchanged int64
	// Deleted counts the entries Delete removed (a directory as one); on
	// a dry run those it would remove, which DeletePaths names.
	Deleted     int64
	DeletePaths []string
	// Verified counts the files Verify read back; VerifyFailed names
	// those that differ from the snapshot.
	Verified     int64
	VerifyFailed []string
	// Privileges counts the setuid and setgid files, device nodes and
	// security.capability attributes a directory restore gave, and those
	// the No* options withheld.
	Privileges fsmeta.Privileges
}

// entry is one node to restore with its output-relative path.
type entry struct {
	rel  string
	node tree.Node
	// replace: an entry at rel is to be replaced (see plan).
	replace bool
}

// Run restores the tree rooted at root under lease, a shared (or exclusive)
// lock on r's store, also on a dry run: a prune must not delete what is
// being read. A restore that found damage or missing data (files, or a
// tree it could not read) then checks with the store that
// the lease still holds, so that data a prune deleted after the lock was
// broken is reported as that, not as damage. A restore that succeeded does
// not ask: every byte it wrote was verified against its id, and nothing was
// read past the lease's safe end, so a lease lost since changes nothing in
// what it restored (over a network the check would be one more round trip).
func Run(ctx context.Context, r *repo.Repository, lease *lock.Lock, root id.ID, opts Options) (*Result, error) {
	leased, err := r.Under(lease) // nothing is read after the lease's safe end
	if err != nil {
		return nil, err
	}
	res, err := run(ctx, leased, root, opts)
	if ierr := leased.Index().Err(); ierr != nil && err != nil && ctx.Err() == nil {
		// The local on-disk index could not be read nor rebuilt: what
		// it left unrestored says nothing of the repository.
		return res, fmt.Errorf("restore: %w", ierr)
	}
	if err == nil || ctx.Err() != nil || !missingData(err) {
		return res, err
	}
	if cerr := lease.Check(ctx); cerr != nil {
		// Lease loss outranks damage: data may be missing because a
		// prune ran, not because the repository is damaged.
		return res, fmt.Errorf("after restoring: %w", cerr)
	}
	return res, err
}

// missingData reports whether err says data was missing or damaged: files
// left unrestored, or a tree (the root's, or one on the way to Path) that
// could not be read because its pack is gone or does not verify.
func missingData(err error) bool {
	return errors.Is(err, ErrDamaged) || errors.Is(err, repo.ErrNotFound) || repo.IsDamage(err)
}

func run(ctx context.Context, r *repo.Repository, root id.ID, opts Options) (*Result, error) {
	if opts.Workers <= 0 {
		opts.Workers = restoreShape(r).workers
	}
	if opts.Warnf == nil {
		opts.Warnf = func(string, ...any) {}
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	start, prefix, err := resolvePath(ctx, r, root, opts.Path)
	if err != nil {
		return nil, err
	}
	switch opts.Format {
	case FormatDir, "":
		return restoreDir(ctx, r, start, prefix, opts)
	case FormatZip:
		return restoreZip(ctx, r, start, prefix, opts)
	}
	return nil, fmt.Errorf("unknown restore format %q (want dir or zip)", opts.Format)
}

// Validate checks the options before anything is read or written, for
// every caller (the command line, the dashboard, Run itself): the format,
// the -overwrite mode (an empty one becomes OverwriteNever), the -include
// and -exclude patterns, and the combinations that cannot be honoured.
// Its errors wrap ErrBadOptions and name the flags concerned.
func (o *Options) Validate() error {
	ow, err := ParseOverwrite(string(o.Overwrite))
	if err != nil {
		return err
	}
	o.Overwrite = ow
	switch o.Format {
	case FormatDir, FormatZip, "":
	default:
		return fmt.Errorf("%w: -format %q: want dir or zip", ErrBadOptions, o.Format)
	}
	if o.Format == FormatZip && (ow != OverwriteNever || o.Delete || o.Verify) {
		return fmt.Errorf("%w: -overwrite, -delete and -verify apply to directory restores, not zip files", ErrBadOptions)
	}
	if o.Within != nil && o.DryRun {
		return fmt.Errorf("%w: a dry run writes nothing to confine to a directory", ErrBadOptions)
	}
	if o.Delete && (len(o.Include) > 0 || len(o.Exclude) > 0) {
		// What is left out would look like something to delete.
		return fmt.Errorf("%w: -delete cannot be combined with -include or -exclude: what they leave out would be deleted", ErrBadOptions)
	}
	_, err = newSelection(*o)
	return err
}

// resolvePath finds the node -path names. It returns a synthetic start
// entry: for the whole snapshot a directory with rel ".".
func resolvePath(ctx context.Context, r *repo.Repository, root id.ID, path string) (entry, string, error) {
	rootEntry := entry{rel: ".", node: tree.Node{Name: ".", Type: tree.TypeDir, Subtree: root, Mode: 0o755}}
	path = strings.Trim(path, "/")
	if path == "" || path == "." {
		return rootEntry, "", nil
	}
	if treewalk.Depth(path) > tree.MaxDepth {
		return entry{}, "", fmt.Errorf("-path %q: %w", treewalk.ShortPath(path), tree.ErrTooDeep)
	}
	cur := root
	parts := strings.Split(path, "/")
	for i, name := range parts {
		if err := tree.CheckName(name); err != nil {
			return entry{}, "", fmt.Errorf("-path %q: %w", path, err)
		}
		t, err := r.LoadTree(ctx, cur)
		if err != nil {
			return entry{}, "", err
		}
		var found *tree.Node
		for j := range t.Nodes {
			if t.Nodes[j].Name == name {
				found = &t.Nodes[j]
				break
			}
		}
		if found == nil {
			return entry{}, "", fmt.Errorf("%w: %s", ErrPathNotFound, strings.Join(parts[:i+1], "/"))
		}
		if i == len(parts)-1 {
			return entry{rel: path, node: *found}, strings.Join(parts[:i], "/"), nil
		}
		if found.Type != tree.TypeDir {
			return entry{}, "", fmt.Errorf("%w: %s is not a directory", ErrPathNotFound, strings.Join(parts[:i+1], "/"))
		}
		cur = found.Subtree
	}
	return rootEntry, "", nil
}

// errTreeUnreadable marks a directory whose tree blob could not be loaded.
var errTreeUnreadable = errors.New("directory tree unreadable")

// walk calls fn for every entry below (and including) start, parents
// before children. A directory below start whose tree cannot be loaded is
// handed to unreadable (its contents cannot even be named) and the walk goes
// on with its siblings, so one bad tree blob costs only its own subtree. An
// unreadable start, an error of fn or cancellation stops the walk.
//
// The trees below start are measured first (treewalk.Measurer): a snapshot
// whose directories nest deeper than tree.MaxDepth, or that would expand
// to more than tree.MaxEntries entries, fails before anything is written.
// The walk recurses once per level, so no deeper than tree.MaxDepth.
//
// clash, if not nil, reports each entry whose name is, on the restore
// target, that of a sibling the walk met before (clashRule: on Windows "A"
// and "a", or "a:b" and "a%3Ab"; on a file system that folds case "A" and
// "a"): the entry and what is below it are skipped, so that neither
// overwrites nor merges into the other. A zip file holds any names: its
// walk passes nil.
func walk(ctx context.Context, r *repo.Repository, start entry, fn func(e entry) error, unreadable func(rel string, err error), clash *nameClash) error {
	prefix := start.rel // a path from the snapshot root, "" for the root
	if prefix == "." {
		prefix = ""
	}
	m := treewalk.NewMeasurer(r)
	m.SkipUnreadable = true // reported by the walk, which goes on
	if start.node.Type == tree.TypeDir {
		if _, err := m.Measure(ctx, start.node.Subtree, prefix); err != nil {
			return err
		}
	}
	w := &treeWalk{m: m, fn: fn, unreadable: unreadable, clash: clash}
	err := w.entry(ctx, start, treewalk.Depth(prefix))
	if errors.Is(err, errTreeUnreadable) {
		// Only start's own tree gets here: below it, unreadable took them.
		return fmt.Errorf("%s: %w", start.rel, err)
	}
	return err
}

// treeWalk is the state of one walk.
type treeWalk struct {
	m          *treewalk.Measurer // reads the trees
	fn         func(e entry) error
	unreadable func(rel string, err error)
	clash      *nameClash // nil: names are not compared
	entries    int64      // met so far, against tree.MaxEntries
}

// entry walks e, found depth levels below the snapshot root, and what is
// below it.
func (w *treeWalk) entry(ctx context.Context, e entry, depth int) error {
	if depth > tree.MaxDepth {
		return fmt.Errorf("%s: %w", treewalk.ShortPath(e.rel), tree.ErrTooDeep)
	}
	if w.entries++; w.entries > tree.MaxEntries {
		return tree.ErrTooManyEntries
	}
	if err := w.fn(e); errors.Is(err, errSkipDir) {
		return nil
	} else if err != nil {
		return err
	}
	if e.node.Type != tree.TypeDir {
		return nil
	}
	t, err := w.m.LoadTree(ctx, e.node.Subtree)
	if err != nil {
		return fmt.Errorf("%w: %w", errTreeUnreadable, err)
	}
	var seen map[string]string // fold key → the name that took it
	for _, n := range t.Nodes {
		if err := ctx.Err(); err != nil {
			return err
		}
		rel := childRel(e.rel, n.Name)
		if w.clash != nil && w.clash.met(&seen, n.Name, rel, len(t.Nodes)) {
			continue
		}
		err := w.entry(ctx, entry{rel: rel, node: n}, depth+1)
		switch {
		case err == nil:
		case errors.Is(err, errTreeUnreadable) && ctx.Err() == nil:
			w.unreadable(rel, err)
		default:
			return err
		}
	}
	return nil
}

// errSkipDir, returned by walk's callback for a directory, skips its
// contents and goes on with its siblings.
var errSkipDir = errors.New("skip directory")

type hardlinkKey struct{ dev, ino uint64 }

func linkKey(n *tree.Node) (hardlinkKey, bool) {
	if n.Type == tree.TypeDir || n.Links < 2 || n.Inode == 0 {
		return hardlinkKey{}, false
	}
	return hardlinkKey{n.Device, n.Inode}, true
}

// shape is how a directory restore spreads its work: workers restoring at
// once, of which at most decoders decode at once, each reading ranges of
// at most span bytes of a pack into buffers on huge pages or not, and
// streaming the runs of a file's chunks or not.
type shape struct {
	workers, decoders int
	span              uint64
	hugePages         bool
	stream            bool
}

// remoteWorkers is the fewest workers of a restore from a store across a
// network: as many as a store's default connections (cli's
// -store-connections), each with one read in flight.
const remoteWorkers = 8

// restoreShape returns the shape of a restore from r's store.
//
// A local store's reads are fast: twice as many workers as cores, each
// decoding what it read, in ranges of up to maxBatchSpan read whole into
// buffers on huge pages (fewer page faults, which cost on these VMs).
//
// A store across a network (a declared request cost of remoteCost or
// more) keeps its workers waiting for round trips: a restore over it runs
// at least remoteWorkers of them, streaming ranges of up to streamSpan (a
// pack) and decoding each chunk as it arrives (stream.go), with decoders
// only as many as cores. A worker's buffer then holds one chunk, not a
// range, on small pages (a page fault costs nothing next to a round trip,
// and a chunk rounded up to huge pages would waste a megabyte a worker on
// average). Issue #37's remote profile: 8 workers streaming restore the
// 1 GB set in about 0.8 of the time of 8 reading 4 MiB ranges whole, which
// took 0.8 of the time of 4 reading 8 MiB, at the same peak RSS.
func restoreShape(r *repo.Repository) shape {
	cores := runtime.GOMAXPROCS(0)
	if r.RequestCost() < remoteCost {
		return shape{workers: 2 * cores, decoders: 2 * cores, span: maxBatchSpan, hugePages: true}
	}
	return shape{workers: max(2*cores, remoteWorkers), decoders: cores, span: streamSpan, stream: true}
}
