package repotest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/store"
)

// The events an EndGate records, in the order its stores saw them.
const (
	IndexSent    = "index PUT sent"
	IndexDone    = "index PUT answered"
	CheckSent    = "lease check sent"
	CheckDone    = "lease check answered"
	SnapshotSent = "snapshot PUT"
)

// EndGate watches the end of a write (a backup, a copy) through the stores
// it wraps: it records the index files' PUTs, the lease checks' reads of
// shared lock keys (Lock.Check reads each key it holds once; acquiring and
// refreshing a shared lock do not read its key) and the snapshots' PUTs.
// It holds the first index PUT until a lease check's request has arrived
// on any of its stores, and fails that PUT when none came within hold: a
// writer that checks its lease only after its index PUT fails rather than
// hangs.
type EndGate struct {
	hold    time.Duration
	checked chan struct{} // closed when the first lease check arrives
	once    sync.Once
	mu      sync.Mutex
	held    bool // the first index PUT was held
	log     []string
}

// NewEndGate returns a gate that holds the first index PUT at most hold.
func NewEndGate(hold time.Duration) *EndGate {
	return &EndGate{hold: hold, checked: make(chan struct{})}
}

// Wrap returns st watched by g. With breakLock, a lease check finds its
// shared lock key deleted, as by a break-lock by hand.
func (g *EndGate) Wrap(st store.Store, breakLock bool) store.Store {
	return &gated{Store: st, g: g, breakLock: breakLock}
}

// Events returns the events recorded so far.
func (g *EndGate) Events() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.log)
}

func (g *EndGate) record(ev string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.log = append(g.log, ev)
}

// holdIndex holds the first index PUT until a lease check arrives.
func (g *EndGate) holdIndex(ctx context.Context) error {
	g.mu.Lock()
	first := !g.held
	g.held = true
	g.mu.Unlock()
	if !first {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, g.hold)
	defer cancel()
	select {
	case <-g.checked:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("index PUT held %v and no lease check came beside it: %w", g.hold, ctx.Err())
	}
}

// gated is one store an EndGate watches.
type gated struct {
	store.Store
	g         *EndGate
	breakLock bool
}

func (s *gated) Put(ctx context.Context, key string, data []byte, opts store.PutOptions) (store.ObjectInfo, error) {
	switch {
	case strings.HasPrefix(key, repo.SnapshotPrefix):
		s.g.record(SnapshotSent)
	case strings.HasPrefix(key, repo.IndexPrefix):
		s.g.record(IndexSent)
		if err := s.g.holdIndex(ctx); err != nil {
			return store.ObjectInfo{}, err
		}
		defer s.g.record(IndexDone)
	}
	return s.Store.Put(ctx, key, data, opts)
}

func (s *gated) Stat(ctx context.Context, key string) (store.ObjectInfo, error) {
	if err := s.leaseCheck(ctx, key); err != nil {
		return store.ObjectInfo{}, err
	}
	defer s.checkAnswered(key)
	return s.Store.Stat(ctx, key)
}

func (s *gated) Get(ctx context.Context, key string, max int64) ([]byte, error) {
	if err := s.leaseCheck(ctx, key); err != nil {
		return nil, err
	}
	defer s.checkAnswered(key)
	return s.Store.Get(ctx, key, max)
}

func (s *gated) leaseCheck(ctx context.Context, key string) error {
	if !strings.HasPrefix(key, lock.SharedPrefix) {
		return nil
	}
	s.g.record(CheckSent)
	s.g.once.Do(func() { close(s.g.checked) })
	if s.breakLock {
		return s.Delete(ctx, key)
	}
	return nil
}

func (s *gated) checkAnswered(key string) {
	if strings.HasPrefix(key, lock.SharedPrefix) {
		s.g.record(CheckDone)
	}
}
