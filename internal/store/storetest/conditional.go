package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/cloudstic/cloudstic/internal/store"
)

// The conditional writes the lock relies on: create-if-absent and
// compare-and-swap, alone and raced by many writers, and their refusal on
// stores that do not declare them.

func testCreateIfAbsent(t *testing.T, s store.Store) {
	if !s.Capabilities().CreateIfAbsent {
		t.Skip("store declares no create-if-absent")
	}
	ctx := context.Background()
	if _, err := s.Put(ctx, "c/key", []byte("one"), store.PutOptions{IfAbsent: true}); err != nil {
		t.Fatal(err)
	}
	_, err := s.Put(ctx, "c/key", []byte("two"), store.PutOptions{IfAbsent: true})
	if !errors.Is(err, store.ErrExists) {
		t.Fatalf("second create = %v, want ErrExists", err)
	}
	if got := mustGet(t, s, "c/key"); string(got) != "one" {
		t.Fatalf("failed create changed the object to %q", got)
	}
	if err := s.Delete(ctx, "c/key"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, "c/key", []byte("three"), store.PutOptions{IfAbsent: true}); err != nil {
		t.Fatalf("create after delete: %v", err)
	}
}

// race runs n functions at once and returns their errors.
func race(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = fn(i)
		}()
	}
	close(start)
	wg.Wait()
	return errs
}

func testCreateIfAbsentRace(t *testing.T, s store.Store) {
	if !s.Capabilities().CreateIfAbsent {
		t.Skip("store declares no create-if-absent")
	}
	for round := 0; round < 5; round++ {
		key := fmt.Sprintf("race/create-%d", round)
		errs := race(16, func(i int) error {
			_, err := s.Put(context.Background(), key, []byte(fmt.Sprint(i)), store.PutOptions{IfAbsent: true})
			return err
		})
		winners := -1
		count := 0
		for i, err := range errs {
			switch {
			case err == nil:
				winners = i
				count++
			case !errors.Is(err, store.ErrExists):
				t.Fatalf("racer %d: %v", i, err)
			}
		}
		if count != 1 {
			t.Fatalf("round %d: %d racers won create-if-absent, want exactly 1", round, count)
		}
		if got := mustGet(t, s, key); string(got) != fmt.Sprint(winners) {
			t.Fatalf("object holds %q, winner was %d", got, winners)
		}
	}
}

func testCompareAndSwap(t *testing.T, s store.Store) {
	if !s.Capabilities().CompareAndSwap {
		t.Skip("store declares no compare-and-swap")
	}
	ctx := context.Background()
	v1 := mustPut(t, s, "cas/key", []byte("v1"))
	if v1.Version == "" {
		t.Fatal("a CAS store must return the version from Put")
	}
	v2, err := s.Put(ctx, "cas/key", []byte("v2"), store.PutOptions{IfVersion: v1.Version})
	if err != nil {
		t.Fatalf("swap with current version: %v", err)
	}
	if v2.Version == "" || v2.Version == v1.Version {
		t.Fatalf("swap returned version %q (old %q)", v2.Version, v1.Version)
	}
	if _, err := s.Put(ctx, "cas/key", []byte("v3"), store.PutOptions{IfVersion: v1.Version}); !errors.Is(err, store.ErrVersionMismatch) {
		t.Fatalf("swap with stale version = %v, want ErrVersionMismatch", err)
	}
	if got := mustGet(t, s, "cas/key"); string(got) != "v2" {
		t.Fatalf("failed swap changed the object to %q", got)
	}
	st, err := s.Stat(ctx, "cas/key")
	if err != nil {
		t.Fatal(err)
	}
	if st.Version != v2.Version {
		t.Fatalf("Stat version %q != Put version %q", st.Version, v2.Version)
	}
	if err := s.Delete(ctx, "cas/key"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, "cas/key", []byte("v4"), store.PutOptions{IfVersion: v2.Version}); !errors.Is(err, store.ErrVersionMismatch) {
		t.Fatalf("swap of a deleted key = %v, want ErrVersionMismatch", err)
	}
	if _, err := s.Get(ctx, "cas/key", testBound); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("failed swap of a deleted key created it: %v", err)
	}
}

func testCompareAndSwapRace(t *testing.T, s store.Store) {
	if !s.Capabilities().CompareAndSwap {
		t.Skip("store declares no compare-and-swap")
	}
	base := mustPut(t, s, "cas/race", []byte("base"))
	errs := race(8, func(i int) error {
		_, err := s.Put(context.Background(), "cas/race", []byte(fmt.Sprint(i)), store.PutOptions{IfVersion: base.Version})
		return err
	})
	count := 0
	for i, err := range errs {
		switch {
		case err == nil:
			count++
		case !errors.Is(err, store.ErrVersionMismatch):
			t.Fatalf("racer %d: %v", i, err)
		}
	}
	if count != 1 {
		t.Fatalf("%d racers won compare-and-swap, want exactly 1", count)
	}
}

func testUnsupported(t *testing.T, s store.Store) {
	ctx := context.Background()
	caps := s.Capabilities()
	if !caps.CreateIfAbsent {
		if _, err := s.Put(ctx, "u/k", []byte("x"), store.PutOptions{IfAbsent: true}); !errors.Is(err, store.ErrUnsupported) {
			t.Errorf("undeclared create-if-absent = %v, want ErrUnsupported", err)
		}
	}
	if !caps.CompareAndSwap {
		if _, err := s.Put(ctx, "u/k", []byte("x"), store.PutOptions{IfVersion: "v"}); !errors.Is(err, store.ErrUnsupported) {
			t.Errorf("undeclared compare-and-swap = %v, want ErrUnsupported", err)
		}
	}
	if _, err := s.Put(ctx, "u/k", []byte("x"), store.PutOptions{IfAbsent: true, IfVersion: "v"}); err == nil {
		t.Error("contradictory PutOptions accepted")
	}
}
