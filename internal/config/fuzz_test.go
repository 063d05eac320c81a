package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// FuzzParse loads arbitrary profiles files. A refused file is ErrInvalid;
// a loaded one holds only valid names, stores with a URI, profiles whose
// stores and auth entries exist, and well-formed secret references; and
// it survives the encoder: rendered as Save writes it, with and without
// an entry added as `store new` adds one, it loads back the same.
func FuzzParse(f *testing.F) {
	f.Add([]byte(cloudsticFile))
	f.Add([]byte(literalFile))
	f.Add([]byte("version: 1\n"))
	f.Add([]byte(""))
	f.Add([]byte("version: 2\n"))
	f.Add([]byte("stores:\n  a:\n    uri: local:/x\n    password_secret: env://\n"))
	f.Add([]byte("profiles:\n  p:\n    source: local:/x\n    store: missing\n"))
	f.Add([]byte("stores:\n  a: &x\n    uri: local:/x\nprofiles:\n  b: *x\n"))
	f.Add([]byte("stores: [1, 2]\n"))
	f.Add([]byte("stores:\n  a:\n    uri: local:/x\n  a:\n    uri: local:/y\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("profiles.yaml", data)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		checkLoaded(t, file)
		out, err := file.encode()
		if err != nil {
			t.Fatalf("encoding a loaded file: %v", err)
		}
		again, err := Parse("profiles.yaml", out)
		if err != nil {
			t.Fatalf("the encoded file does not load: %v\n%s", err, out)
		}
		sameEntries(t, file, again)

		const added = "fuzz-added-store"
		if _, ok := file.Stores[added]; ok {
			return
		}
		st := Store{URI: "local:/backups", PasswordSecret: "env://FUZZ_PW"}
		if err := file.AddStore(added, st); err != nil {
			t.Fatalf("AddStore: %v", err)
		}
		if out, err = file.encode(); err != nil {
			t.Fatalf("encoding with a store added: %v", err)
		}
		if again, err = Parse("profiles.yaml", out); err != nil {
			t.Fatalf("the file with a store added does not load: %v\n%s", err, out)
		}
		sameEntries(t, file, again)
	})
}

// checkLoaded checks what Parse promises of a file it accepted.
func checkLoaded(t *testing.T, f *File) {
	t.Helper()
	if f.Version != 1 {
		t.Fatalf("version %d accepted", f.Version)
	}
	for name, s := range f.Stores {
		if !ValidName(name) || s.URI == "" {
			t.Fatalf("store %q (uri %q) accepted", name, s.URI)
		}
		for field, ref := range s.SecretFields() {
			if _, err := ParseRef(ref); ref != "" && err != nil {
				t.Fatalf("stores.%s.%s = %q accepted: %v", name, field, ref, err)
			}
		}
	}
	for name, p := range f.Profiles {
		if !ValidName(name) {
			t.Fatalf("profile %q accepted", name)
		}
		if _, ok := f.Stores[p.Store]; p.Store != "" && !ok {
			t.Fatalf("profile %q names the missing store %q", name, p.Store)
		}
		if _, ok := f.Auth[p.AuthRef]; p.AuthRef != "" && !ok {
			t.Fatalf("profile %q names the missing auth entry %q", name, p.AuthRef)
		}
	}
	for name := range f.Auth {
		if !ValidName(name) {
			t.Fatalf("auth entry %q accepted", name)
		}
	}
}

// sameEntries fails unless a and b hold the same entries.
func sameEntries(t *testing.T, a, b *File) {
	t.Helper()
	if a.Version != b.Version || !reflect.DeepEqual(a.Stores, b.Stores) || !reflect.DeepEqual(a.Profiles, b.Profiles) || !reflect.DeepEqual(a.Auth, b.Auth) {
		t.Fatalf("entries changed through the encoder:\n%+v\n%+v", a, b)
	}
}

// FuzzParseRef parses arbitrary secret references. A refused one is
// ErrBadRef; an accepted one is SCHEME://PATH of a known scheme, PATH of
// the scheme's shape.
func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"env://VAR", "file:///etc/pw", "config-token://cloudstic/nas", "secret-service://c/i",
		"keychain://s/a", "wincred://svc:acct", "env://", "file://rel", "ftp://x", "config-token://a/b/c", "novalue", "env://A/B"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRef(s)
		if err != nil {
			if !errors.Is(err, ErrBadRef) {
				t.Fatalf("error %v does not wrap ErrBadRef", err)
			}
			return
		}
		if r.Raw != s || r.Scheme+"://"+r.Path != s {
			t.Fatalf("%q parsed as %+v", s, r)
		}
		switch r.Scheme {
		case SchemeEnv, SchemeWincred:
			if r.Path == "" || strings.Contains(r.Path, "/") {
				t.Fatalf("%q accepted", s)
			}
		case SchemeFile:
			if !strings.HasPrefix(r.Path, "/") {
				t.Fatalf("%q accepted: not absolute", s)
			}
		case SchemeConfigToken, SchemeSecretService, SchemeKeychain:
			a, b, ok := strings.Cut(r.Path, "/")
			if !ok || !ValidName(a) || !ValidName(b) {
				t.Fatalf("%q accepted: want two names", s)
			}
		default:
			t.Fatalf("%q accepted: unknown scheme %q", s, r.Scheme)
		}
	})
}
