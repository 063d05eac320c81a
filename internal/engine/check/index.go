package check

import (
	"context"
	"errors"
	"fmt"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/index"
)

// Check keeps the index on disk, not in memory: a scratch index
// (repo.ScratchIndex) of every blob's entry, sorted, that lookups read
// with a pread, and in memory a few dozen bytes per pack. So a check of a
// repository of 100 M blobs holds ~15 MB of bits for the blobs it has
// seen, where the in-memory index took ~7 GB. The packs' own lists of
// blobs, which the comparison with their headers needs, are read from
// the index files a second time, one file at a time (checkPacks).

// readIndex reads every index file into the scratch index, reporting
// unreadable ones, and says whether any was.
func (c *checker) readIndex(ctx context.Context) (damagedIndex bool, err error) {
	files, _, err := c.r.ListObjects(ctx, repo.IndexPrefix)
	if err != nil {
		return false, fmt.Errorf("listing index files: %w", err)
	}
	c.res.IndexFiles = len(files)
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		file, err := c.r.IndexFile(ctx, f.ID)
		switch {
		case errors.Is(err, repo.ErrNotFound):
			c.add(KindNote, f.Key, "deleted while check ran")
			continue
		case err != nil:
			damagedIndex = c.addLoadErr(f.Key, err, repairIndexHint) || damagedIndex
			continue
		}
		if err := c.scratch.AddFile(f.ID, file); err != nil {
			return false, err
		}
	}
	return damagedIndex, nil
}

// finishIndex writes the scratch index, each blob located in a pack on
// the store where one of its copies is, and gives it to the repository's
// index, so that loading trees finds them.
func (c *checker) finishIndex() error {
	onStore := func(pos uint32) bool { return c.stored.OnStore(c.scratch.PackOf(pos)) }
	disk, err := c.scratch.Finish(func(a, b uint32) bool { return onStore(a) && !onStore(b) })
	if err != nil {
		return err
	}
	c.disk = disk
	c.r.Index().SetBase(disk)
	return nil
}

// noteUnindexed notes the packs on the store that no index file names.
func (c *checker) noteUnindexed(damagedIndex bool) {
	now := c.opts.Clock.Now()
	for i := range c.stored.UnindexedCount() {
		o := c.stored.Unindexed(i)
		c.add(KindNote, repo.DescribePack(o.ID), "%s", unindexedNote(damagedIndex, o.ModTime, now, c.opts.Margin))
	}
}

// eachListing calls fn with every pack's first listing, reading the index
// files a second time. A file that can no longer be read is reported and
// its packs skipped.
func (c *checker) eachListing(ctx context.Context, fn func(p index.PackBlobs) error) error {
	return c.scratch.EachPack(ctx, fn, func(fid id.ID, err error) error {
		key := repo.IndexKey(fid)
		switch {
		case errors.Is(err, repo.ErrNotFound):
			c.add(KindNote, key, "deleted while check ran: its packs were not compared with their headers")
		case errors.Is(err, repo.ErrIndexChanged):
			c.add(KindCorrupt, key, "%v", err)
		default:
			c.addErr(key, err, "read again to compare its packs with their headers: %v", err)
		}
		return nil
	})
}
