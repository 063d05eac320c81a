package lock

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/store/local"
	"github.com/cloudstic/cloudstic/internal/store/wrap"
)

// requestLog records the requests of a wrap.Logging store as "OP KEY",
// the name part of a lock key replaced by "*": what docs/lock.md
// ("Cost") lists request by request.
type requestLog struct {
	mu   sync.Mutex
	reqs []string
}

func (r *requestLog) logf(_ string, args ...any) {
	op, _ := args[0].(string)
	key, _ := args[1].(string)
	for _, p := range []string{SharedPrefix, IntentPrefix, QueuePrefix} {
		if strings.HasPrefix(key, p) {
			key = p + "*"
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, strings.TrimSpace(op+" "+key))
}

// take returns the requests recorded so far and forgets them.
func (r *requestLog) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	reqs := r.reqs
	r.reqs = nil
	return reqs
}

// TestLockRequestCounts pins the store requests of a lock's life, one by
// one, on a store with conditional writes (the local store, through the
// real logging wrapper and the real clock): docs/lock.md, "Cost", says
// what each is for. TestRequestCounts counts the same on a fake clock.
func TestLockRequestCounts(t *testing.T) {
	const (
		now, getX, statX = "NOW", "GET " + ExclusiveKey, "STAT " + ExclusiveKey
		createX, swapX   = "PUT(if-absent) " + ExclusiveKey, "PUT(if-version) " + ExclusiveKey
		// The lock deletes its own keys with store.DeleteAbsentOK.
		delX           = "DELETE(if-present) " + ExclusiveKey
		listQ, createQ = "LIST " + QueuePrefix + "*", "PUT(if-absent) " + QueuePrefix + "*"
		delQ           = "DELETE(if-present) " + QueuePrefix + "*"
		listI, createI = "LIST " + IntentPrefix + "*", "PUT(if-absent) " + IntentPrefix + "*"
		swapI, delI    = "PUT(if-version) " + IntentPrefix + "*", "DELETE(if-present) " + IntentPrefix + "*"
		listS, createS = "LIST " + SharedPrefix + "*", "PUT(if-absent) " + SharedPrefix + "*"
		swapS, delS    = "PUT(if-version) " + SharedPrefix + "*", "DELETE(if-present) " + SharedPrefix + "*"
	)
	// The shared acquire reads the exclusive key and lists the intents at
	// once: that pair comes in either order.
	shared := requestSeq{{now}, {listQ}, {createS}, {getX, listI}}
	exclusive := oneByOne(now, createI, listI, listQ, listS, statX, createX, listS)
	// With -lock-wait, the queue entry is written first (after the
	// store's time, sampled once) and deleted once the lock is held.
	waiting := func(acquire requestSeq) requestSeq {
		return slices.Concat(acquire[:1], oneByOne(createQ), acquire[1:], oneByOne(delQ))
	}
	tests := []struct {
		name                      string
		exclusive                 bool
		wait                      time.Duration
		acquire, refresh, release requestSeq
	}{
		{"shared", false, 0, shared, oneByOne(swapS), oneByOne(delS)},
		{"exclusive", true, 0, exclusive, oneByOne(swapI, swapX), oneByOne(statX, delX, delI)},
		{"shared -lock-wait", false, time.Minute, waiting(shared), oneByOne(swapS), oneByOne(delS)},
		{"exclusive -lock-wait", true, time.Minute, waiting(exclusive), oneByOne(swapI, swapX), oneByOne(statX, delX, delI)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			rec := &requestLog{}
			st := wrap.NewLogging(local.New(t.TempDir()), rec.logf)
			acquire := AcquireShared
			if tc.exclusive {
				acquire = AcquireExclusive
			}
			step := func(name string, want requestSeq, fn func() error) {
				t.Helper()
				if err := fn(); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if got := rec.take(); !want.matches(got) {
					flat := slices.Concat(want...)
					t.Errorf("%s: %d requests\n%s\nwant %d (those sent at once in any order)\n%s",
						name, len(got), strings.Join(got, "\n"), len(flat), strings.Join(flat, "\n"))
				}
			}
			var l *Lock
			step("acquire", tc.acquire, func() (err error) {
				l, err = acquire(ctx, st, "test", Options{Wait: tc.wait})
				return err
			})
			step("refresh", tc.refresh, func() error { return l.refresh(ctx) })
			step("release", tc.release, func() error { return l.Release(ctx) })
		})
	}
}

// requestSeq is a sequence of steps, each the requests sent at once (in no
// particular order) after the previous step's have answered.
type requestSeq [][]string

// oneByOne is a sequence of requests each sent after the one before.
func oneByOne(reqs ...string) requestSeq {
	seq := make(requestSeq, len(reqs))
	for i, r := range reqs {
		seq[i] = []string{r}
	}
	return seq
}

// matches reports whether got is the sequence, the requests of each step
// in any order.
func (seq requestSeq) matches(got []string) bool {
	for _, step := range seq {
		if len(got) < len(step) {
			return false
		}
		if !slices.Equal(slices.Sorted(slices.Values(got[:len(step)])), slices.Sorted(slices.Values(step))) {
			return false
		}
		got = got[len(step):]
	}
	return len(got) == 0
}
