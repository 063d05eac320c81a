//go:build unix

package fsmeta

import (
	"os"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// maxOpenDirs bounds the directories a Writer keeps open.
const maxOpenDirs = 64

// dirCache keeps the output directories a Writer used last open, so that
// creating a file or applying its metadata works relative to its open
// parent: opening the parent through the Root for every entry walked the
// whole path one openat at a time, three openat and close calls per file of
// a 55,000-file restore. A directory is resolved through the Root once,
// when it is opened; later calls use the directory it was then (never a
// symlink put in its place). Safe for concurrent use.
type dirCache struct {
	mu   sync.Mutex
	open map[string]*openDir
	tick uint64
}

// openDir is one open directory, with the number of calls using it.
type openDir struct {
	f    *os.File
	refs int
	used uint64
}

// acquire returns the directory dir (relative to root), opening it if it
// is not open, and a function to call when done with it.
func (c *dirCache) acquire(root *os.Root, dir string) (*os.File, func(), error) {
	c.mu.Lock()
	d := c.open[dir]
	if d == nil {
		c.mu.Unlock()
		f, err := root.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, nil, err
		}
		c.mu.Lock()
		if d = c.open[dir]; d != nil {
			f.Close() //nolint:errcheck // another caller opened it first; read-only directory
		} else {
			d = &openDir{f: f}
			if c.open == nil {
				c.open = map[string]*openDir{}
			}
			c.open[dir] = d
		}
	}
	c.tick++
	d.refs++ // before evict, which closes only directories not in use
	d.used = c.tick
	c.evict()
	c.mu.Unlock()
	return d.f, func() {
		c.mu.Lock()
		d.refs--
		c.mu.Unlock()
	}, nil
}

// evict closes the least recently used unused directories beyond
// maxOpenDirs. c.mu is held.
func (c *dirCache) evict() {
	for len(c.open) > maxOpenDirs {
		var oldest string
		var found *openDir
		for name, d := range c.open {
			if d.refs == 0 && (found == nil || d.used < found.used) {
				oldest, found = name, d
			}
		}
		if found == nil {
			return // all in use: allowed past the bound until released
		}
		delete(c.open, oldest)
		found.f.Close() //nolint:errcheck // read-only directory: nothing to flush
	}
}

// closeAll closes every open directory.
func (c *dirCache) closeAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, d := range c.open {
		d.f.Close() //nolint:errcheck // read-only directory: nothing to flush
		delete(c.open, name)
	}
}

// forget closes the unused open directories at dir or below it, which is
// about to be removed: a later directory of the same name must be opened
// afresh, not reached through the removed one's descriptor.
func (c *dirCache) forget(dir string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, d := range c.open {
		if d.refs == 0 && (name == dir || strings.HasPrefix(name, dir+"/")) {
			d.f.Close() //nolint:errcheck // read-only directory: nothing to flush
			delete(c.open, name)
		}
	}
}
