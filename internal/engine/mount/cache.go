//go:build !windows

package mount

import (
	"container/list"
	"context"
	"sync"

	"golang.org/x/sync/singleflight"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// blobCache keeps decoded blobs, least recently used out first, within a
// byte budget. Concurrent requests for one blob load it once.
type blobCache struct {
	r     *repo.Repository
	limit int64
	group singleflight.Group

	mu    sync.Mutex
	size  int64
	order *list.List // of *cached, most recent first
	items map[id.ID]*list.Element
}

type cached struct {
	id   id.ID
	data []byte
}

func newBlobCache(r *repo.Repository, limit int64) *blobCache {
	return &blobCache{r: r, limit: limit, order: list.New(), items: map[id.ID]*list.Element{}}
}

// get returns the decoded blob; the slice must not be modified.
func (c *blobCache) get(ctx context.Context, b id.ID) ([]byte, error) {
	c.mu.Lock()
	if el, ok := c.items[b]; ok {
		c.order.MoveToFront(el)
		data := el.Value.(*cached).data
		c.mu.Unlock()
		return data, nil
	}
	c.mu.Unlock()
	v, err, _ := c.group.Do(string(b[:]), func() (any, error) {
		data, err := c.r.LoadBlob(ctx, b)
		if err != nil {
			return nil, err
		}
		c.put(b, data)
		return data, nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]byte), nil
}

func (c *blobCache) put(b id.ID, data []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[b]; ok {
		return
	}
	c.items[b] = c.order.PushFront(&cached{id: b, data: data})
	c.size += int64(len(data))
	// Keep at least the newest blob, even one larger than the budget.
	for c.size > c.limit && c.order.Len() > 1 {
		old := c.order.Remove(c.order.Back()).(*cached)
		delete(c.items, old.id)
		c.size -= int64(len(old.data))
	}
}

// treeCache keeps decoded trees, least recently used out first, up to a
// number of trees. The kernel may forget an inode and look it up again,
// and snapshots share most of their trees: neither should cost a read.
type treeCache struct {
	r     *repo.Repository
	limit int
	group singleflight.Group

	mu    sync.Mutex
	order *list.List // of *cachedTree, most recent first
	items map[id.ID]*list.Element
}

type cachedTree struct {
	id   id.ID
	tree *tree.Tree
}

func newTreeCache(r *repo.Repository, limit int) *treeCache {
	return &treeCache{r: r, limit: limit, order: list.New(), items: map[id.ID]*list.Element{}}
}

// get returns the decoded tree; it must not be modified.
func (c *treeCache) get(ctx context.Context, tid id.ID) (*tree.Tree, error) {
	c.mu.Lock()
	if el, ok := c.items[tid]; ok {
		c.order.MoveToFront(el)
		t := el.Value.(*cachedTree).tree
		c.mu.Unlock()
		return t, nil
	}
	c.mu.Unlock()
	v, err, _ := c.group.Do(string(tid[:]), func() (any, error) {
		t, err := c.r.LoadTree(ctx, tid)
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if _, ok := c.items[tid]; !ok {
			c.items[tid] = c.order.PushFront(&cachedTree{id: tid, tree: t})
			for c.order.Len() > c.limit {
				old := c.order.Remove(c.order.Back()).(*cachedTree)
				delete(c.items, old.id)
			}
		}
		return t, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*tree.Tree), nil
}
