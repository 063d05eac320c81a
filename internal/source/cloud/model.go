package cloud

import (
	"cmp"
	"slices"

	"github.com/cloudstic/cloudstic/internal/source"
)

// Model is a drive's items by id: what a full listing found, or a
// snapshot's items with the change feed applied. Items outside the root
// folder may be held too; only those reachable from the root are in the
// tree.
type Model struct {
	items map[string]*source.Item
}

// NewModel returns a model holding items.
func NewModel(items []source.Item) *Model {
	m := &Model{items: make(map[string]*source.Item, len(items))}
	for i := range items {
		m.Put(items[i])
	}
	return m
}

// Put adds or replaces an item.
func (m *Model) Put(it source.Item) {
	c := it
	m.items[it.ID] = &c
}

// Remove drops the item id (its descendants are no longer reachable).
func (m *Model) Remove(id string) { delete(m.items, id) }

// Has says whether the model holds the item id.
func (m *Model) Has(id string) bool { _, ok := m.items[id]; return ok }

// Get returns the item id.
func (m *Model) Get(id string) (source.Item, bool) {
	it, ok := m.items[id]
	if !ok {
		return source.Item{}, false
	}
	return *it, true
}

// Len is the number of items held.
func (m *Model) Len() int { return len(m.items) }

// children returns the items whose parent is held, by parent id, each
// list sorted by id (so that names are given the same way every time).
func (m *Model) children() map[string][]*source.Item {
	kids := map[string][]*source.Item{}
	for _, it := range m.items {
		kids[it.ParentID] = append(kids[it.ParentID], it)
	}
	for _, list := range kids {
		slices.SortFunc(list, func(a, b *source.Item) int { return cmp.Compare(a.ID, b.ID) })
	}
	return kids
}
