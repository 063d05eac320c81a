package repo

import (
	"context"
	"errors"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo/crypt"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

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
	if _, err := kr.Add(ctx, crypt.SlotPassword, "laptop", []byte("two")); err != nil {
		t.Fatal(err)
	}
	if _, err := kr.Add(ctx, crypt.SlotPassword, "laptop", []byte("x")); !errors.Is(err, ErrLabelTaken) {
		t.Fatalf("duplicate label: %v", err)
	}
	steps := []struct {
		name string
		do   func() error
		want error
	}{
		{"open with second password", func() error { _, err := Open(ctx, st, Credentials{Password: "two"}); return err }, nil},
		{"remove unknown", func() error { return kr.Remove(ctx, "ffff") }, ErrKeyNotFound},
		{"find ambiguous", func() error { _, err := kr.Find(ctx, ""); return err }, ErrKeyNotFound},
		{"change password", func() error { _, err := kr.ChangePassword(ctx, "three", ""); return err }, nil},
		{"old password fails", func() error { _, err := Open(ctx, st, Credentials{Password: "one"}); return err }, ErrWrongCredential},
		{"new password opens", func() error { _, err := Open(ctx, st, Credentials{Password: "three"}); return err }, nil},
		{"remove laptop", func() error {
			s, err := kr.Find(ctx, "laptop")
			if err != nil {
				return err
			}
			return kr.Remove(ctx, s.ID)
		}, nil},
		{"remove last", func() error { return kr.Remove(ctx, kr.Current()) }, ErrLastKey},
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
