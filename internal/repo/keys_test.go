package repo

import (
	"context"
	"errors"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo/crypt"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// acquire takes a lock on st for the rest of the test.
func acquire(t *testing.T, st store.Store, exclusive bool) *lock.Lock {
	t.Helper()
	take := lock.AcquireShared
	if exclusive {
		take = lock.AcquireExclusive
	}
	l, err := take(context.Background(), st, "test", lock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Release(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return l
}

// writerFor returns a writer on r, which was opened on st, under a shared
// lock held until the test ends.
func writerFor(t *testing.T, r *Repository, st store.Store) *Writer {
	t.Helper()
	w, err := r.Writer(acquire(t, st, false))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestKeyring(t *testing.T) {
	ctx := context.Background()
	st := local.New(t.TempDir())
	if _, _, err := Init(ctx, st, InitOptions{Credentials: Credentials{Password: "one"}}); err != nil {
		t.Fatal(err)
	}
	kr, err := OpenKeyring(ctx, st, Credentials{Password: "one"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kr.WithoutLock().Add(ctx, crypt.SlotPassword, "laptop", []byte("two")); err != nil {
		t.Fatal(err)
	}
	if _, err := kr.WithoutLock().Add(ctx, crypt.SlotPassword, "laptop", []byte("x")); !errors.Is(err, ErrLabelTaken) {
		t.Fatalf("duplicate label: %v", err)
	}
	// Removing a slot needs the exclusive lock: without one, or with a
	// shared one, there is no writer; with a lease that ended, every
	// request is refused (changing the password once wrote its new slot
	// past the lease), and nothing is added or removed.
	laptop, err := kr.Find(ctx, "laptop")
	if err != nil {
		t.Fatal(err)
	}
	ended, err := lock.AcquireExclusive(ctx, st, "test", lock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ended.Release(ctx); err != nil {
		t.Fatal(err)
	}
	shared := acquire(t, st, false)
	refused := []struct {
		name  string
		lease *lock.Lock
		want  error
	}{
		{"no lease", nil, ErrNoLease},
		{"zero lease", &lock.Lock{}, ErrNoLease},
		{"shared lease", shared, ErrSharedLease},
		{"ended lease", ended, lock.ErrLeaseLost},
	}
	for _, c := range refused {
		t.Run("remove with "+c.name, func(t *testing.T) {
			w, err := kr.ExclusiveWriter(c.lease)
			if err == nil {
				err = w.Remove(ctx, laptop.ID)
				if _, cerr := w.ChangePassword(ctx, "other", ""); !errors.Is(cerr, c.want) {
					t.Fatalf("change password: got %v, want %v", cerr, c.want)
				}
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			if slots, err := kr.List(ctx); err != nil || len(slots) != 2 {
				t.Fatalf("slots after a refused change: %v %+v", err, slots)
			}
		})
	}
	if err := shared.Release(ctx); err != nil {
		t.Fatal(err)
	}
	kw, err := kr.ExclusiveWriter(acquire(t, st, true))
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		do   func() error
		want error
	}{
		{"open with second password", func() error { _, err := Open(ctx, st, Credentials{Password: "two"}); return err }, nil},
		{"remove unknown", func() error { return kw.Remove(ctx, "ffff") }, ErrKeyNotFound},
		{"find ambiguous", func() error { _, err := kr.Find(ctx, ""); return err }, ErrKeyNotFound},
		{"change password", func() error { _, err := kw.ChangePassword(ctx, "three", ""); return err }, nil},
		{"old password fails", func() error { _, err := Open(ctx, st, Credentials{Password: "one"}); return err }, ErrWrongCredential},
		{"new password opens", func() error { _, err := Open(ctx, st, Credentials{Password: "three"}); return err }, nil},
		{"remove laptop", func() error {
			s, err := kr.Find(ctx, "laptop")
			if err != nil {
				return err
			}
			return kw.Remove(ctx, s.ID)
		}, nil},
		{"remove last", func() error { return kw.Remove(ctx, kr.Current()) }, ErrLastKey},
		{"still opens", func() error { _, err := Open(ctx, st, Credentials{Password: "three"}); return err }, nil},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			if err := s.do(); !errors.Is(err, s.want) {
				t.Fatalf("got %v, want %v", err, s.want)
			}
		})
	}
	slots, err := kr.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(slots) != 1 || !slots[0].Current || slots[0].Kind != crypt.SlotPassword {
		t.Fatalf("slots = %+v", slots)
	}
}

func TestOpenKeyringErrors(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name  string
		init  InitOptions
		creds Credentials
		want  error
	}{
		{"unencrypted", InitOptions{NoEncryption: true}, Credentials{Password: "x"}, ErrNotEncrypted},
		{"no credentials", InitOptions{Credentials: Credentials{Password: "x"}}, Credentials{}, ErrNeedCredential},
		{"wrong password", InitOptions{Credentials: Credentials{Password: "x"}}, Credentials{Password: "y"}, ErrWrongCredential},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := local.New(t.TempDir())
			if _, _, err := Init(ctx, st, c.init); err != nil {
				t.Fatal(err)
			}
			if _, err := OpenKeyring(ctx, st, c.creds); !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}
}
