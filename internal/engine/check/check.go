package check

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/engine/prune"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/index"
)

// Kinds of problem.
const (
	KindMissing = "missing"
	KindCorrupt = "corrupt"
	KindNote    = "note"
	// KindReadError: the store failed to deliver an object (network,
	// permissions). It is an error, but not evidence of damage: run check
	// again before concluding anything.
	KindReadError = "error"
)

// problemKind tells damage (the stored bytes are wrong) from a failure to
// read them at all.
func problemKind(err error) string {
	if repo.IsDamage(err) {
		return KindCorrupt
	}
	return KindReadError
}

// addErr reports an object that could not be loaded, as damage or as a
// read failure depending on err.
func (c *checker) addErr(key string, err error, format string, args ...any) {
	kind := problemKind(err)
	msg := fmt.Sprintf(format, args...)
	if kind == KindReadError {
		msg = "could not be read (a store error, not necessarily damage): " + msg
	}
	c.add(kind, key, "%s", msg)
}

// Problem is one finding, printed as "[kind] key: message".
type Problem struct {
	Kind    string `json:"kind"`
	Key     string `json:"key"`
	Message string `json:"message"`
}

// String renders the problem on one line.
func (p Problem) String() string { return fmt.Sprintf("[%s] %s: %s", p.Kind, p.Key, p.Message) }

// Options configure a check.
type Options struct {
	// Snapshot restricts the structure check to one snapshot (id prefix or
	// "latest"); empty checks all.
	Snapshot string
	// ReadData reads every selected pack and verifies every blob in it.
	ReadData bool
	// Subset selects the packs ReadData reads.
	Subset Subset
	// MaxUnused is the unused share (0..1) above which prune repacks a
	// pack (default prune.DefaultMaxUnused): check says which unused blobs
	// prune removes and which it keeps by the same rule.
	MaxUnused float64
	// Margin is prune's margin (default prune.DefaultMargin): check says
	// prune keeps a pack no index names that the store wrote within it.
	Margin time.Duration
	// Clock gives now for Margin (default clock.Real).
	Clock clock.Clock
	// Workers is the number of packs checked at once (default 4).
	Workers int
	// Logf receives progress messages (nil: none).
	Logf func(format string, args ...any)
	// Progress, when set, counts the packs checked (and the bytes read).
	Progress *Progress
}

// Progress holds live counters of the pack phase, updated atomically.
type Progress struct {
	Packs, PacksTotal atomic.Int64
	Bytes, BytesTotal atomic.Int64 // of the packs -read-data reads
}

// Result counts what was checked and lists the findings.
type Result struct {
	Snapshots  int       `json:"snapshots"`
	Trees      int       `json:"trees"`
	Blobs      int       `json:"blobs_referenced"`
	IndexFiles int       `json:"index_files"`
	Packs      int       `json:"packs"`
	PacksRead  int       `json:"packs_read"`
	BlobsRead  int       `json:"blobs_read"`
	BytesRead  int64     `json:"bytes_read"`
	Errors     []Problem `json:"errors"`
	Notes      []Problem `json:"notes"`
}

// OK reports whether no error was found (notes are fine).
func (r *Result) OK() bool { return len(r.Errors) == 0 }

// checker holds the state of one run.
type checker struct {
	r      *repo.Repository
	opts   Options
	mu     sync.Mutex
	res    *Result
	stored *repo.StoredPacks // packs on the store
	damage map[id.ID]bool    // packs found missing or corrupt
	// snapshots are the snapshot ids listed before anything else (see
	// Run), and badSnapshots the keys under snapshots/ that name none.
	snapshots    []id.ID
	badSnapshots []string
	// The index (index.go), and its sorted file.
	scratch *repo.ScratchIndex
	disk    *index.Disk
}

func (c *checker) add(kind, key, format string, args ...any) {
	p := Problem{Kind: kind, Key: key, Message: fmt.Sprintf(format, args...)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if kind == KindNote {
		c.res.Notes = append(c.res.Notes, p)
	} else {
		c.res.Errors = append(c.res.Errors, p)
	}
}

func (c *checker) logf(format string, args ...any) {
	if c.opts.Logf != nil {
		c.opts.Logf(format, args...)
	}
}

// Run checks r. r's in-memory index must not be loaded: check reads every
// index file itself so that it can report each one's damage. The error is
// for failures to run at all (listing the store); damage is in the result.
func Run(ctx context.Context, r *repo.Repository, opts Options) (*Result, error) {
	if opts.Workers <= 0 {
		opts.Workers = 4
	}
	if opts.Margin == 0 {
		opts.Margin = prune.DefaultMargin
	}
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if r.Index().Len() != 0 {
		return nil, errors.New("check: the repository's index must not be loaded before check")
	}
	c := &checker{r: r, opts: opts, res: &Result{}, damage: make(map[id.ID]bool)}
	c.checkConfig(ctx)
	// The snapshots are listed first, then the index files are read, then
	// the packs are listed: a backup writes its packs, then its index
	// files, then its snapshot, so of a backup that ends while check runs
	// every snapshot listed has its index files read, and every pack an
	// index file read names is listed. (A pack listed but not yet indexed
	// is only a note, with its age.)
	var err error
	if c.snapshots, c.badSnapshots, err = r.ListIDs(ctx, repo.SnapshotPrefix); err != nil {
		return nil, fmt.Errorf("listing snapshots: %w", err)
	}
	if c.scratch, err = r.NewScratchIndex(); err != nil {
		return nil, err
	}
	defer c.scratch.Close()
	damagedIndex, err := c.readIndex(ctx)
	if err != nil {
		return nil, err
	}
	stored, bad, err := c.scratch.ListPacks(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing packs: %w", err)
	}
	for _, k := range bad {
		c.add(KindNote, k, "not a pack name; ignored")
	}
	c.stored = stored
	c.res.Packs = stored.Stored()
	if err := c.finishIndex(); err != nil {
		return nil, err
	}
	defer r.Index().SetBase(nil) // before the scratch index is closed
	c.noteUnindexed(damagedIndex)
	c.logf("checking %d packs against the index", c.scratch.PackCount())
	if err := c.checkPacks(ctx); err != nil {
		return nil, err
	}
	if err := c.checkSnapshots(ctx); err != nil {
		return nil, err
	}
	sortProblems(c.res.Errors)
	sortProblems(c.res.Notes)
	return c.res, ctx.Err()
}

func sortProblems(ps []Problem) {
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].Kind != ps[j].Kind {
			return ps[i].Kind < ps[j].Kind
		}
		return ps[i].Key < ps[j].Key
	})
}
