package backup

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/user"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/engine/exclude"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/chunker"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/source"
	"github.com/cloudstic/cloudstic/internal/source/local"
)

// ErrSource means the source path cannot be backed up at all.
var ErrSource = errors.New("invalid backup source")

// Options configure one backup run.
type Options struct {
	// Path is the directory to back up, as Source names it.
	Path string
	// Paths, when set instead of Path, are several files and directories
	// of the local file system to store in one snapshot, each under its
	// absolute path (see resolveRoots).
	Paths []string
	// Source is what Path is read from (default: the local file system).
	Source source.Source
	// Tags are recorded in the snapshot.
	Tags []string
	// Excludes are exclude patterns in gitignore syntax, one line each
	// (see package exclude), matched below Path.
	Excludes []string
	// ExcludeIfPresent leaves out directories holding an entry of one of
	// these names.
	ExcludeIfPresent []string
	// ExcludeCaches leaves out directories holding a valid CACHEDIR.TAG.
	ExcludeCaches bool
	// ExcludeLargerThan, when positive, leaves out larger regular files.
	ExcludeLargerThan int64
	// OneFileSystem keeps directories on another device than Path empty.
	OneFileSystem bool
	// VolumeUUID, when set, is recorded as the UUID of the volume the
	// source is on, instead of the one detected on portable drives:
	// snapshots of the same path on the same volume are one group, from
	// any host and mount point (see snapshot.Volume).
	VolumeUUID string
	// SkipMode records no permission bits, owners or inode flags (see
	// fsmeta.Capturer.SkipMode).
	SkipMode bool
	// SkipFlags records no inode flags (chattr).
	SkipFlags bool
	// SkipXattrs records no extended attributes.
	SkipXattrs bool
	// XattrNamespaces, when set, records only the extended attributes
	// whose names start with one of these prefixes.
	XattrNamespaces []string
	// DryRun computes everything but stores nothing.
	DryRun bool
	// Hostname defaults to os.Hostname. With the source, it picks the
	// parent snapshot.
	Hostname string
	// Time, when set, is the snapshot's time instead of the clock's (to
	// import old data). It may not be later than the clock: the parent's
	// time tells which of its entries had settled (see settled).
	Time time.Time
	// IgnoreEmpty writes no snapshot when the tree and the source
	// directory's own metadata equal the parent snapshot's.
	IgnoreEmpty bool
	// Workers is the number of file and blob workers (default GOMAXPROCS).
	Workers int
	// Uploaders is the number of concurrent pack uploads (default 2).
	Uploaders int
	// Compression compresses file contents (the zero value is zstd);
	// directory trees always use zstd.
	Compression pack.Compression
	// CheckpointPacks, when positive, is how many stored packs are
	// indexed together while the run goes on, instead of
	// repo.CheckpointPacks (tests use small ones).
	CheckpointPacks int
	// CheckpointInterval, when positive, is the longest a stored pack
	// waits for the index file that makes it reusable (counted when the
	// next pack is stored), instead of repo.CheckpointAge: what a
	// kill -9 or a power cut can lose.
	CheckpointInterval time.Duration
	// Clock stamps the snapshot (default clock.Real) and times the
	// checkpoints.
	Clock clock.Clock
	// Warnf reports files that could not be read; the run goes on.
	Warnf func(format string, args ...any)
	// Verbosef, when set, is told of every new or changed file.
	Verbosef func(format string, args ...any)
	// Progress, when set, receives the live counters of the run.
	Progress *Progress
	// Stream, when set, is backed up instead of Path: the snapshot holds
	// one file (see Stream). The exclude and metadata options do not apply.
	Stream *Stream
}

// Progress holds live counters, updated atomically while the run goes on.
// Files and Bytes count what is done, whether read or reused unchanged from
// the parent snapshot.
type Progress struct {
	Files, Dirs, Bytes atomic.Int64
	CurrentFile        atomic.Value // string
}

// ErrFutureTime means Options.Time is later than the clock.
var ErrFutureTime = errors.New("snapshot time is in the future")

// Result is what a run produced.
type Result struct {
	ID id.ID // zero on a dry run, and when Unchanged with IgnoreEmpty
	// Unchanged: with IgnoreEmpty, nothing differed from the parent
	// snapshot, and no snapshot was written.
	Unchanged bool
	Snapshot  *snapshot.Snapshot
	Parent    *snapshot.WithID
	Errors    []error // files and directories that could not be read
}

// Run backs up opts.Path into the repository wr writes to, under wr's
// lease (a shared lock or stronger). Run checks the lease once every pack
// is stored (beside the final index file's write) and writes the snapshot
// only after that check: a backup whose lease was lost leaves only packs
// and index files, which the next prune may remove, never a snapshot
// naming data a prune may have deleted. The repository's index must be loaded.
// heads are the heads of the repository's snapshots, oldest first (to
// find the parent, which Run then loads; see repo.SnapshotHeads); nil
// means none. With opts.DryRun, Run is DryRun on wr's view.
func Run(ctx context.Context, wr *repo.Writer, heads []snapshot.Head, opts Options) (*Result, error) {
	if wr == nil {
		return nil, repo.ErrNoLease
	}
	if opts.DryRun {
		return DryRun(ctx, wr.Repository, heads, opts)
	}
	return run(ctx, wr.Repository, wr, heads, opts)
}

// DryRun is Run storing nothing (opts.DryRun is implied): it reads r, with
// no lock, and computes everything else.
func DryRun(ctx context.Context, r *repo.Repository, heads []snapshot.Head, opts Options) (*Result, error) {
	opts.DryRun = true
	return run(ctx, r, nil, heads, opts)
}

// run is Run reading r, writing through wr (nil on a dry run).
func run(ctx context.Context, r *repo.Repository, wr *repo.Writer, heads []snapshot.Head, opts Options) (*Result, error) {
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	start := opts.Clock.Now()
	when := start
	if !opts.Time.IsZero() {
		if opts.Time.After(start) {
			return nil, fmt.Errorf("%w: %s", ErrFutureTime, opts.Time.Format(time.RFC3339))
		}
		when = opts.Time
	}
	if opts.Stream != nil {
		return runStreamSnapshot(ctx, r, wr, heads, opts, start, when)
	}
	if opts.Source == nil {
		opts.Source = local.New()
	}
	rs, err := resolveRoots(ctx, &opts)
	if err != nil {
		return nil, err
	}
	root := rs.root
	real, fi := root.Real, root.Info
	filter, err := exclude.NewFilter(opts.ExcludeRules(), opts.Source, fi)
	if err != nil {
		return nil, err
	}
	for _, info := range rs.infos {
		filter.AddRoot(info)
	}
	opts.fillDefaults()
	snap, err := newSnapshot(when, rs.origin(opts))
	if err != nil {
		return nil, err
	}
	snap.Excludes = opts.excludeSet()
	if snap.Volume, err = volumeOf(ctx, real, opts); err != nil {
		return nil, err
	}
	// A snapshot too large to store (a million -files-from paths) is
	// refused now, not after every file was read.
	if err := repo.CheckSnapshotSize(snap); err != nil {
		return nil, err
	}
	drv, isDrive := opts.Source.(source.Drive)
	if isDrive {
		snap.Cloud = driveRecord(drv)
	}
	res := &Result{Snapshot: snap}
	parentTree, err := res.setParent(ctx, r, heads)
	if err != nil {
		return nil, err
	}
	if isDrive {
		if err := scanDrive(ctx, r, drv, snap, res.Parent, opts); err != nil {
			return nil, err
		}
	}

	gear := chunker.NewGear(r.Key().ChunkerKey())
	cfg := r.Config().Chunker
	w, err := newWalker(ctx, r, wr, opts, filter, gear, chunker.Params{Min: cfg.Min, Avg: cfg.Avg, Max: cfg.Max})
	if err != nil {
		return nil, err
	}
	defer w.cancel(nil) // after saveSnapshot's flush: the uploads run under w.ctx
	w.selected = rs.selected
	if res.Parent != nil {
		var dev uint64
		if n, err := w.cap.Node(ctx, real, fi); err == nil {
			dev = n.Device
		}
		w.racyMargins(res.Parent.Time, dev, racyMargin(ctx, opts.Source, root))
	}
	// A drive's device number changes from machine to machine, and from
	// one plugging-in to the next.
	w.ignoreDevice = snap.Volume != nil
	rootID, err := w.run(real, fi, parentTree)
	if err != nil {
		return nil, err
	}
	snap.Tree = rootID
	if rootNode, err := w.cap.Node(ctx, real, fi); err == nil {
		rootNode.Subtree = rootID
		snap.Root = &rootNode
	} else {
		w.errs.add(fmt.Errorf("metadata of the source directory itself: %w", err))
	}
	sum := &snap.Summary
	*sum = w.summary()
	res.Errors = w.errs.list()
	sum.Errors = int64(len(res.Errors))
	return saveSnapshot(ctx, wr, w.sink, snap, res, opts, start)
}

// saveSnapshot ends a backup of any source that started at start: it
// flushes s (the last packs and index file) and writes the snapshot,
// except for -dry-run and for an unchanged tree with
// -ignore-empty-snapshot. Before a snapshot, the lease is checked once
// every pack is stored, beside the final index file's write (s.FlushWith):
// the snapshot is written only once both succeeded, so a backup whose
// lease was lost writes none, and readers find the index files of every
// snapshot they list.
func saveSnapshot(ctx context.Context, wr *repo.Writer, s sink, snap *snapshot.Snapshot, res *Result, opts Options, start time.Time) (*Result, error) {
	res.Unchanged = opts.IgnoreEmpty && res.Parent != nil && sameAsParent(snap, res.Parent.Snapshot)
	var check func(context.Context) error
	if !res.Unchanged && !opts.DryRun {
		check = func(ctx context.Context) error {
			if err := wr.Lease().Check(ctx); err != nil {
				return fmt.Errorf("before writing the snapshot: %w", err)
			}
			return nil
		}
	}
	if err := s.FlushWith(ctx, check); err != nil {
		return nil, err
	}
	snap.Summary.DurationSeconds = opts.Clock.Now().Sub(start).Seconds()
	if check == nil {
		return res, nil
	}
	sid, err := wr.SaveSnapshot(ctx, snap)
	if err != nil {
		return nil, err
	}
	res.ID = sid
	return res, nil
}

// fillDefaults sets the host name, workers and uploaders a caller left zero.
func (o *Options) fillDefaults() {
	if o.Hostname == "" {
		o.Hostname, _ = os.Hostname() // an empty hostname is acceptable
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.Uploaders <= 0 {
		o.Uploaders = 2
	}
}

// newSnapshot starts the snapshot of a backup taken at when from its
// origin (see origin): the time, the user and a fresh nonce (so that two
// backups of the same tree at the same time still get different ids).
func newSnapshot(when time.Time, origin snapshot.Snapshot) (*snapshot.Snapshot, error) {
	snap := &origin
	snap.Time, snap.Program, snap.Nonce = when.UTC(), "cloudstic", make([]byte, 16)
	if _, err := rand.Read(snap.Nonce); err != nil {
		return nil, err
	}
	if u, err := user.Current(); err == nil {
		snap.Username = u.Username
	}
	return snap, nil
}

// ExcludeRules are the exclude rules of opts, for package exclude: the
// backup and the CLI's pre-walk that counts the totals both apply them.
func (o *Options) ExcludeRules() exclude.Options {
	return exclude.Options{Patterns: o.Excludes, IfPresent: o.ExcludeIfPresent, Caches: o.ExcludeCaches,
		LargerThan: o.ExcludeLargerThan, OneFileSystem: o.OneFileSystem}
}

// excludeSet is the record of the exclude rules in the snapshot; nil
// when there are none. Blank and comment lines are not recorded.
func (o *Options) excludeSet() *snapshot.ExcludeSet {
	set := &snapshot.ExcludeSet{IfPresent: o.ExcludeIfPresent, Caches: o.ExcludeCaches,
		LargerThan: o.ExcludeLargerThan, OneFileSystem: o.OneFileSystem}
	for _, p := range o.Excludes {
		if exclude.ParsePattern(p) == nil {
			set.Patterns = append(set.Patterns, p)
		}
	}
	if set.Patterns == nil && set.IfPresent == nil && !set.Caches && set.LargerThan == 0 && !set.OneFileSystem {
		return nil
	}
	return set
}

// sameAsParent says whether snap stores what its parent stored: the same
// tree and the same metadata of the source directory itself.
func sameAsParent(snap, parent *snapshot.Snapshot) bool {
	if snap.Tree != parent.Tree || (snap.Root == nil) != (parent.Root == nil) {
		return false
	}
	return snap.Root == nil || snap.Root.Equal(parent.Root)
}
