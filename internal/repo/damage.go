package repo

import (
	"errors"
	"sort"
	"strings"
	"sync"

	"github.com/cloudstic/cloudstic/internal/repo/crypt"
	"github.com/cloudstic/cloudstic/internal/repo/index"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
	"github.com/cloudstic/cloudstic/internal/store"
)

// ErrNotFound is the store's "not found" (store.ErrNotFound, the same
// value), the only error that means an object is absent. Engine packages
// check it through repo, which owns all store I/O, instead of importing
// the store layer.
var ErrNotFound = store.ErrNotFound

// IsDamage reports whether err says that stored bytes are wrong (they do not
// authenticate, decode or hash to their name), as opposed to a failure to
// read them at all (network, permissions, timeouts, cancellation), which
// says nothing about the repository's health. Commands use it to avoid
// calling a flaky connection "corruption", and to skip (never delete) only
// what is positively damaged. An object larger than its kind may be
// (store.ErrTooLarge: no writer made it, see "Read bounds") and one that is
// not a regular file on a file system store (store.ErrNotRegular) are
// damage too.
func IsDamage(err error) bool {
	for _, damage := range []error{ErrCorrupt, ErrConfigTampered, pack.ErrCorrupt, crypt.ErrAuth, index.ErrCorrupt,
		tree.ErrCorrupt, snapshot.ErrCorrupt, store.ErrTooLarge, store.ErrNotRegular} {
		if errors.Is(err, damage) {
			return true
		}
	}
	return false
}

// Damaged is a stored snapshot or index file whose bytes are wrong (IsDamage
// holds for Err): the loaders skip it instead of failing, and return it so
// that each caller decides what that means for its work.
type Damaged struct {
	// Key is the object's store key: "snapshots/<id>" or "index/packs/<id>".
	Key string
	// Err says what is wrong with it.
	Err error
}

// Reason is Err's message without the key it usually starts with, for
// lines that name the key themselves.
func (d Damaged) Reason() string {
	return strings.TrimPrefix(d.Err.Error(), d.Key+": ")
}

// IsSnapshot reports whether the damaged object is a snapshot (else it is
// an index file).
func (d Damaged) IsSnapshot() bool { return strings.HasPrefix(d.Key, SnapshotPrefix) }

// damageLog remembers the damaged objects a repository's loaders skipped
// and hands each one, the first time only, to the watcher set with
// WatchDamage. Views of a repository (Under, Fresh) share it.
type damageLog struct {
	watch func(Damaged)
	mu    sync.Mutex
	seen  map[string]bool
}

// WatchDamage makes fn get every damaged snapshot or index file that
// Snapshots, SnapshotHeads and LoadIndex skip, on r and on the views made
// from it afterwards, once per object and process: front ends warn with it
// and list the skipped objects in their output. Call it before loading
// anything; fn may be called from several goroutines, never at once.
func (r *Repository) WatchDamage(fn func(Damaged)) {
	r.damage = &damageLog{watch: fn, seen: make(map[string]bool)}
}

// ReportDamaged passes objects found damaged outside the loaders (a
// backup's parent, whose head came from the metadata cache) to the damage
// watcher, like those the loaders skip.
func (r *Repository) ReportDamaged(list ...Damaged) { r.noteDamaged(list) }

// noteDamaged passes the damaged objects not seen before to the watcher.
func (r *Repository) noteDamaged(list []Damaged) {
	l := r.damage
	if l == nil || len(list) == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, d := range list {
		if !l.seen[d.Key] {
			l.seen[d.Key] = true
			l.watch(d)
		}
	}
}

// sortDamaged orders damaged objects by key.
func sortDamaged(list []Damaged) {
	sort.Slice(list, func(i, j int) bool { return list[i].Key < list[j].Key })
}
