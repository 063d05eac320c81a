package snapcopy

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
)

// ErrSameRepository: the source and the destination are one repository.
var ErrSameRepository = errors.New("the source and the destination are the same repository")

// Options configure a copy.
type Options struct {
	// IDs name the source snapshots to copy (id prefixes or "latest");
	// empty: every snapshot that matches the filters.
	IDs []string
	// Tags selects the source snapshots carrying every one of these tags.
	Tags []string
	// Hosts selects the source snapshots of one of these hosts.
	Hosts []string
	// DryRun decides what would be copied; it reads no data and writes
	// nothing.
	DryRun bool
	// Compression compresses data blobs in the destination (the zero
	// value is zstd).
	Compression pack.Compression
	// Uploaders is the number of concurrent pack uploads (0: 2).
	Uploaders int
}

// Copied is one source snapshot and the id of its copy.
type Copied struct {
	// Source is the snapshot in the source repository.
	Source snapshot.WithID
	// NewID is the id of the copy in the destination; zero in a dry run
	// and when the copy failed.
	NewID id.ID
}

// Result is what Run did.
type Result struct {
	// Copied are the snapshots copied (or, in a dry run, to copy), oldest
	// first.
	Copied []Copied
	// Skipped are the selected snapshots the destination already holds
	// (the same original id), oldest first.
	Skipped []snapshot.WithID
	// Rechunked: the chunker parameters differ, so file contents were
	// chunked again with the destination's.
	Rechunked bool
	// BlobsRead counts the data blobs read from the source.
	BlobsRead int64
	// BlobsAdded and BytesAdded count the blobs (data and trees) new to the
	// destination and their stored bytes.
	BlobsAdded int64
	BytesAdded int64
}

// Plan picks the source snapshots the options select and splits them into
// those to copy and those the destination already holds, matched by the
// id each backup was first stored under. Of several source snapshots of
// one backup (a tag rewrite interrupted between its two steps) only the
// newest is copied. No I/O.
func Plan(src, dst []snapshot.WithID, opts Options) (*Result, error) {
	selected, err := selectSnapshots(src, opts)
	if err != nil {
		return nil, err
	}
	have := make(map[id.ID]bool, len(dst))
	for _, s := range dst {
		have[s.OriginalID(s.ID)] = true
	}
	res := &Result{}
	for i := len(selected) - 1; i >= 0; i-- { // newest first: it wins a duplicate
		s := selected[i]
		orig := s.OriginalID(s.ID)
		if have[orig] {
			res.Skipped = append(res.Skipped, s)
			continue
		}
		have[orig] = true
		res.Copied = append(res.Copied, Copied{Source: s})
	}
	slices.Reverse(res.Skipped)
	slices.Reverse(res.Copied)
	return res, nil
}

// selectSnapshots returns the snapshots named by id (each once) that match
// the filters, oldest first.
func selectSnapshots(snaps []snapshot.WithID, opts Options) ([]snapshot.WithID, error) {
	want := make(map[id.ID]bool)
	for _, ref := range opts.IDs {
		s, err := repo.FindSnapshot(snaps, ref, nil)
		if err != nil {
			return nil, err
		}
		want[s.ID] = true
	}
	var out []snapshot.WithID
	for _, s := range snaps {
		if len(opts.IDs) > 0 && !want[s.ID] {
			continue
		}
		if len(opts.Hosts) > 0 && !slices.Contains(opts.Hosts, s.Hostname) {
			continue
		}
		if !hasAll(s.Tags, opts.Tags) {
			continue
		}
		out = append(out, s)
	}
	return out, nil
}

func hasAll(tags, want []string) bool {
	for _, t := range want {
		if !slices.Contains(tags, t) {
			return false
		}
	}
	return true
}

// Run copies the snapshots opts selects from src into the repository dst
// writes to. Both indexes must be loaded. It reads src under srcLease and
// writes under dst's lease, each a shared (or stronger) lock on its
// repository, so that no prune deletes what is read or deduplicated
// against. Each snapshot's packs and index files are stored and flushed
// before its snapshot object, and both leases are checked once its packs
// are stored, beside its last index file's write, before that object's. On an error the result holds what was done so far. With
// opts.DryRun, Run is DryRun (src read under its lease).
func Run(ctx context.Context, src *repo.Repository, srcLease *lock.Lock, dst *repo.Writer, opts Options) (*Result, error) {
	leased, err := src.Under(srcLease)
	if err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	if dst == nil {
		return nil, fmt.Errorf("destination: %w", repo.ErrNoLease)
	}
	if opts.DryRun {
		return DryRun(ctx, leased, dst.Repository, opts)
	}
	return run(ctx, leased, dst.Repository, srcLease, dst, opts)
}

// DryRun plans what Run would copy from src into dst, with no lock,
// copying nothing (opts.DryRun is implied).
func DryRun(ctx context.Context, src, dst *repo.Repository, opts Options) (*Result, error) {
	opts.DryRun = true
	return run(ctx, src, dst, nil, nil, opts)
}

// run is Run reading src and dst, writing through wr (nil on a dry run).
func run(ctx context.Context, src, dst *repo.Repository, srcLease *lock.Lock, wr *repo.Writer, opts Options) (*Result, error) {
	if src.Config().ID == dst.Config().ID {
		return nil, fmt.Errorf("%w (repository id %s)", ErrSameRepository, src.Config().ID)
	}
	// Damaged snapshots are skipped on both sides: one of the source
	// cannot be copied, and a damaged copy in the destination does not
	// count as copied (its source is copied again).
	srcSnaps, _, err := src.Snapshots(ctx)
	if err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	dstSnaps, _, err := dst.Snapshots(ctx)
	if err != nil {
		return nil, fmt.Errorf("destination: %w", err)
	}
	res, err := Plan(srcSnaps, dstSnaps, opts)
	if err != nil {
		return nil, err
	}
	c := newCopier(src, dst, wr, opts)
	res.Rechunked = c.rechunk
	if opts.DryRun {
		return res, nil
	}
	defer func() {
		res.BlobsRead = c.blobsRead
		res.BlobsAdded, res.BytesAdded = c.blobsAdded, c.bytesAdded
	}()
	for i := range res.Copied {
		cp := &res.Copied[i]
		nid, err := c.copySnapshot(ctx, cp.Source, func(ctx context.Context) error {
			if err := srcLease.Check(ctx); err != nil {
				return fmt.Errorf("source: %w", err)
			}
			if err := wr.Lease().Check(ctx); err != nil {
				return fmt.Errorf("destination: %w", err)
			}
			return nil
		})
		if err != nil {
			return res, fmt.Errorf("copying snapshot %s: %w", cp.Source.ID.Short(), err)
		}
		cp.NewID = nid
	}
	return res, nil
}
