package check

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/index"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
)

// checkPacks compares every indexed pack that exists with its own header
// (or, with ReadData, reads and verifies it), a few packs at a time. The
// entries of a pack come from a second reading of the index files, one
// file at a time (eachListing), so that only the packs being checked
// and one index file are held as lists.
func (c *checker) checkPacks(ctx context.Context) error {
	if p := c.opts.Progress; p != nil {
		for n := range c.scratch.PackCount() {
			if c.stored.OnStore(n) {
				p.PacksTotal.Add(1)
				if c.opts.ReadData && c.opts.Subset.Selects(c.stored.ID(n)) {
					p.BytesTotal.Add(c.stored.Size(n))
				}
			}
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(c.opts.Workers)
	done := 0
	err := c.eachListing(gctx, func(p index.PackBlobs) error {
		pid, entries := p.ID, p.Blobs
		n, _ := c.scratch.PackNumber(pid) // listed: EachPack yields only listed packs
		size := c.stored.Size(n)
		if !c.stored.OnStore(n) {
			c.markDamaged(pid) // judged after the snapshots: needed or stale
			return nil
		}
		read := c.opts.ReadData && c.opts.Subset.Selects(pid)
		g.Go(func() error {
			if read {
				c.readPack(gctx, pid, size, entries)
			} else {
				c.checkHeader(gctx, pid, size, entries)
			}
			if p := c.opts.Progress; p != nil {
				p.Packs.Add(1)
				if read {
					p.Bytes.Add(size)
				}
			}
			c.mu.Lock()
			done++
			if done%500 == 0 {
				c.logf("checked %d/%d packs", done, c.scratch.PackCount())
			}
			c.mu.Unlock()
			return gctx.Err()
		})
		return nil
	})
	if werr := g.Wait(); err == nil {
		err = werr
	}
	return err
}

func (c *checker) markDamaged(pid id.ID) {
	c.mu.Lock()
	c.damage[pid] = true
	c.mu.Unlock()
}

func (c *checker) isDamaged(pid id.ID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.damage[pid]
}

func (c *checker) checkHeader(ctx context.Context, pid id.ID, size int64, entries []pack.Entry) {
	key := repo.DescribePack(pid)
	hdr, err := c.r.ReadPackHeader(ctx, pid, size, len(entries))
	if err != nil {
		c.packError(key, pid, err)
		return
	}
	c.compare(key, pid, hdr, entries)
}

// packError reports a pack that could not be read.
func (c *checker) packError(key string, pid id.ID, err error) {
	c.markDamaged(pid)
	if errors.Is(err, repo.ErrNotFound) {
		c.add(KindMissing, key, "pack disappeared while check ran")
		return
	}
	c.addErr(key, err, "%v", err)
}

// compare checks that the index entries of a pack match its header.
func (c *checker) compare(key string, pid id.ID, hdr, entries []pack.Entry) {
	byID := make(map[id.ID]pack.Entry, len(hdr))
	for _, e := range hdr {
		byID[e.ID] = e
	}
	bad := 0
	var example string
	for _, e := range entries {
		h, ok := byID[e.ID]
		if !ok || !h.SameLocation(e) {
			bad++
			if example == "" {
				example = fmt.Sprintf("index has %s %s at %d+%d, header has %+v (present: %v)", e.Type, e.ID.Short(), e.Offset, e.Length, h, ok)
			}
		}
	}
	if bad > 0 {
		c.markDamaged(pid)
		c.add(KindCorrupt, key, "%d index entries disagree with the pack's header (e.g. %s)", bad, example)
	}
}

// readPack downloads a pack and checks its hash, header and every blob
// (repo.Repository.VerifyPack).
func (c *checker) readPack(ctx context.Context, pid id.ID, size int64, entries []pack.Entry) {
	key := repo.DescribePack(pid)
	v, err := c.r.VerifyPack(ctx, pid, entries)
	if err != nil {
		c.packError(key, pid, err)
		return
	}
	c.mu.Lock()
	c.res.PacksRead++
	c.res.BytesRead += v.Size
	c.mu.Unlock()
	if v.NameMismatch {
		c.markDamaged(pid)
		c.add(KindCorrupt, key, "content does not hash to the pack's name (%d bytes, listed as %d)", v.Size, size)
	}
	if v.HeaderErr != nil {
		c.packError(key, pid, v.HeaderErr)
		return
	}
	c.compare(key, pid, v.Header, entries)
	c.mu.Lock()
	c.res.BlobsRead += len(entries)
	c.mu.Unlock()
	if v.BadBlobs > 0 {
		c.markDamaged(pid)
		c.add(KindCorrupt, key, "%d of %d blobs do not decrypt or hash to their ids (e.g. %v)", v.BadBlobs, len(entries), v.FirstBadBlob)
	}
}
