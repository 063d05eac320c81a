//go:build unix

package fsmeta

import (
	"os/user"
	"strconv"
	"sync"
)

// idNames caches uid → user name and gid → group name. An id without a
// local name maps to "". Safe for concurrent use.
type idNames struct {
	mu     sync.Mutex
	users  map[uint32]string
	groups map[uint32]string
}

func newIDNames() *idNames {
	return &idNames{users: map[uint32]string{}, groups: map[uint32]string{}}
}

// user returns the name of uid, or "" when it has none.
func (c *idNames) user(uid uint32) string {
	return c.cached(c.users, uid, func(s string) (string, error) {
		u, err := user.LookupId(s)
		if err != nil {
			return "", err
		}
		return u.Username, nil
	})
}

// group returns the name of gid, or "" when it has none.
func (c *idNames) group(gid uint32) string {
	return c.cached(c.groups, gid, func(s string) (string, error) {
		g, err := user.LookupGroupId(s)
		if err != nil {
			return "", err
		}
		return g.Name, nil
	})
}

func (c *idNames) cached(m map[uint32]string, id uint32, lookup func(string) (string, error)) string {
	c.mu.Lock()
	name, ok := m[id]
	c.mu.Unlock()
	if ok {
		return name
	}
	name, err := lookup(strconv.FormatUint(uint64(id), 10))
	if err != nil {
		// Unknown ids (and lookup failures) are recorded by number only.
		name = ""
	}
	c.mu.Lock()
	m[id] = name
	c.mu.Unlock()
	return name
}

// localIDs caches user name → uid and group name → gid on the restoring
// machine; -1 marks a name unknown here. Safe for concurrent use.
type localIDs struct {
	mu     sync.Mutex
	users  map[string]int
	groups map[string]int
}

func newLocalIDs() *localIDs {
	return &localIDs{users: map[string]int{}, groups: map[string]int{}}
}

// uid returns the local uid of the user called name, or fallback when
// name is empty or unknown here.
func (c *localIDs) uid(name string, fallback uint32) int {
	return c.cached(c.users, name, fallback, func() (string, error) {
		u, err := user.Lookup(name)
		if err != nil {
			return "", err
		}
		return u.Uid, nil
	})
}

// gid returns the local gid of the group called name, or fallback when
// name is empty or unknown here.
func (c *localIDs) gid(name string, fallback uint32) int {
	return c.cached(c.groups, name, fallback, func() (string, error) {
		g, err := user.LookupGroup(name)
		if err != nil {
			return "", err
		}
		return g.Gid, nil
	})
}

func (c *localIDs) cached(m map[string]int, name string, fallback uint32, lookup func() (string, error)) int {
	if name == "" {
		return int(fallback)
	}
	c.mu.Lock()
	id, ok := m[name]
	c.mu.Unlock()
	if !ok {
		id = -1
		if s, err := lookup(); err == nil {
			if v, err := strconv.ParseUint(s, 10, 32); err == nil {
				id = int(v)
			}
		}
		c.mu.Lock()
		m[name] = id
		c.mu.Unlock()
	}
	if id < 0 {
		return int(fallback)
	}
	return id
}
