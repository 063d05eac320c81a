package cache

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/cloudstic/cloudstic/internal/store"
)

type cachedFile struct {
	key   string
	size  int64
	mtime time.Time
}

// files lists every cached object (and removes stale temp files).
func (c *Cache) files() ([]cachedFile, error) {
	var out []cachedFile
	err := filepath.WalkDir(c.dir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed by another process while we walked
		}
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), "tmp-") {
			if time.Since(fi.ModTime()) > time.Hour {
				// Left by a crashed writer; best effort.
				_ = os.Remove(p)
			}
			return nil
		}
		rel, err := filepath.Rel(c.dir, p)
		if err != nil {
			return err
		}
		out = append(out, cachedFile{key: filepath.ToSlash(rel), size: fi.Size(), mtime: fi.ModTime()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	return out, nil
}

// keysUnder lists the keys of the cached objects that start with prefix,
// walking only the directory of prefix (temp files left out).
func (c *Cache) keysUnder(prefix string) ([]string, error) {
	start := c.dir
	if i := strings.LastIndex(prefix, "/"); i >= 0 {
		if err := store.CheckKey(prefix[:i]); err != nil {
			return nil, fmt.Errorf("cache: %w", err)
		}
		start = filepath.Join(c.dir, filepath.FromSlash(prefix[:i]))
	}
	var keys []string
	err := filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // not created yet, or removed while we walked
		}
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), "tmp-") {
			return err
		}
		rel, err := filepath.Rel(c.dir, p)
		if err != nil {
			return err
		}
		if key := filepath.ToSlash(rel); strings.HasPrefix(key, prefix) {
			keys = append(keys, key)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	return keys, nil
}

// evict removes the least recently used objects until the cache holds at
// most 3/4 of its bound.
func (c *Cache) evict() error {
	files, err := c.files()
	if err != nil {
		return err
	}
	var total int64
	for _, f := range files {
		total += f.size
	}
	sort.Slice(files, func(i, j int) bool { return files[i].mtime.Before(files[j].mtime) })
	target := c.max / 4 * 3
	for _, f := range files {
		if total <= target {
			break
		}
		if err := os.Remove(filepath.Join(c.dir, filepath.FromSlash(f.key))); err == nil || errors.Is(err, fs.ErrNotExist) {
			total -= f.size
		}
	}
	c.mu.Lock()
	c.size = total
	c.mu.Unlock()
	return nil
}
