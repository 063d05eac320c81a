package lock

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// The exclusive holder removes the stale intents and shared keys it read;
// a shared acquire leaves them, and nothing live is ever removed.
func TestExclusiveSweepsStale(t *testing.T) {
	cases := []struct {
		name         string
		intents      int
		shared       int
		takeShared   bool // acquire shared instead: sweeps nothing
		wantLeftover int
	}{
		{name: "stale intent", intents: 1},
		{name: "stale shared keys", shared: 3},
		{name: "both", intents: 2, shared: 2},
		{name: "more than one acquire sweeps", shared: sweepMax + 2, wantLeftover: 2},
		{name: "shared acquire sweeps nothing", intents: 1, shared: 2, takeShared: true, wantLeftover: 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clk := newFake()
			st := newTestStore(t, clk)
			start := clk.Now()
			for i := range c.intents {
				writeLock(t, st, fmt.Sprintf("%s2020-01-01T00:00:00.000000000Z-%016x", IntentPrefix, i),
					payload{Operation: "prune", Holder: "crashed (pid 2)", AcquiredAt: start, ExpiresAt: start.Add(time.Minute)})
			}
			for i := range c.shared {
				writeLock(t, st, fmt.Sprintf("%s2020-01-01T00:00:00.000000000Z-%016x", SharedPrefix, i),
					payload{Operation: "backup", Holder: "crashed (pid 3)", AcquiredAt: start, ExpiresAt: start.Add(time.Minute), IsShared: true})
			}
			clk.Advance(5 * time.Minute)
			l, err := acquire(t, clk, st, c.takeShared, "prune", testOpts(clk, "me"))
			if err != nil {
				t.Fatal(err)
			}
			want := keyNames(l)
			infos, err := List(t.Context(), st, Options{Clock: clk})
			if err != nil {
				t.Fatal(err)
			}
			var left int
			for _, info := range infos {
				if info.Holder != "me (pid 1)" {
					left++
				}
			}
			if left != c.wantLeftover || len(infos) != len(want)+c.wantLeftover {
				t.Errorf("after acquiring: %d locks of others left (want %d), %d in all", left, c.wantLeftover, len(infos))
			}
			release(t, l)
		})
	}
}

// A live lock of another process is never swept: the acquire fails and
// the lock stays.
func TestExclusiveSweepKeepsLive(t *testing.T) {
	clk := newFake()
	st := newTestStore(t, clk)
	start := clk.Now()
	old := SharedPrefix + "2020-01-01T00:00:00.000000000Z-0000000000000001"
	writeLock(t, st, old, payload{Operation: "backup", Holder: "crashed (pid 3)", AcquiredAt: start, ExpiresAt: start.Add(time.Minute), IsShared: true})
	clk.Advance(5 * time.Minute)
	live, err := acquire(t, clk, st, true, "backup", testOpts(clk, "alive"))
	if err != nil {
		t.Fatal(err)
	}
	defer release(t, live)
	if _, err := acquire(t, clk, st, false, "prune", testOpts(clk, "me")); !errors.Is(err, ErrLocked) {
		t.Fatalf("prune beside a live backup: %v", err)
	}
	assertKeys(t, st, old, live.Info().Key)
}

// A refusal names every holder in one line, counted, and only maxNamed of
// many (which ones follows the keys' order, random between equal times);
// an exclusive holder's intent is not named twice.
func TestRefusalNamesEveryHolder(t *testing.T) {
	cases := []struct {
		name      string
		holders   int
		exclusive bool
		want      []string
		named     int // how many "shared by host-" a refusal names; 0: not checked
	}{
		{name: "one", holders: 1, want: []string{"repository is locked (shared) by host-0 (pid 1) (operation: backup, acquired: "}},
		{name: "three", holders: 3, want: []string{"locked by 3 holders: shared by host-", " (pid 1) (operation: backup, acquired: ",
			"host-0 (pid 1) (", "host-1 (pid 1) (", "host-2 (pid 1) ("}, named: 3},
		{name: "many", holders: maxNamed + 3, want: []string{fmt.Sprintf("locked by %d holders: ", maxNamed+3), ", and 3 more"},
			named: maxNamed},
		{name: "exclusive holder", exclusive: true, want: []string{"repository is exclusively locked by prune-host (pid 1) (operation: prune, "}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clk := newFake()
			st := newTestStore(t, clk)
			var held []*Lock
			for i := range c.holders {
				l, err := acquire(t, clk, st, true, "backup", testOpts(clk, fmt.Sprintf("host-%d", i)))
				if err != nil {
					t.Fatal(err)
				}
				held = append(held, l)
			}
			shared := false
			if c.exclusive {
				l, err := acquire(t, clk, st, false, "prune", testOpts(clk, "prune-host"))
				if err != nil {
					t.Fatal(err)
				}
				held, shared = append(held, l), true
			}
			_, err := acquire(t, clk, st, shared, "op", testOpts(clk, "me"))
			if !errors.Is(err, ErrLocked) || errors.Is(err, ErrHolderDead) {
				t.Fatalf("got %v, want ErrLocked", err)
			}
			msg := err.Error()
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%q\ndoes not contain %q", msg, w)
				}
			}
			if strings.Contains(msg, "\n") || strings.Count(msg, "prune-host") > 1 {
				t.Errorf("%q: more than one line, or names the exclusive holder twice", msg)
			}
			if got := strings.Count(msg, "shared by host-"); c.named != 0 && got != c.named {
				t.Errorf("%q names %d holders, want %d", msg, got, c.named)
			}
			for _, l := range held {
				release(t, l)
			}
		})
	}
}
