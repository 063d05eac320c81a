package crypt

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	bip39 "github.com/cosmos/go-bip39"
)

// cheapKDF says whether Unwrap may run argon2id with p inside a fuzz
// iteration (in-range parameters up to MaxKDFWork are legal but slow).
func cheapKDF(p *KDFParams) bool {
	return p == nil || p.check() != nil || (p.Memory <= 256 && p.Time <= 2 && p.Threads <= 2)
}

func FuzzDecodeSlot(f *testing.F) {
	master := bytes.Repeat([]byte{7}, MasterSize)
	platform := bytes.Repeat([]byte{1}, 32)
	for _, tc := range []struct {
		kind   string
		secret []byte
	}{{SlotPassword, []byte("pw")}, {SlotPlatform, platform}, {SlotRecovery, platform}} {
		s, err := NewSlot(tc.kind, "label", tc.secret, master)
		if err != nil {
			f.Fatal(err)
		}
		if s.KDF != nil {
			s.KDF.Memory, s.KDF.Time, s.KDF.Threads = 64, 1, 1 // keep the seeds cheap to unwrap
			if s, err = rewrap(s, tc.secret, master); err != nil {
				f.Fatal(err)
			}
		}
		data, err := s.Encode()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, tc.secret)
	}
	f.Add([]byte(`{"kind":"password","kdf":{"time":4294967295,"memory_kib":4294967295,"threads":255,"salt":"AAAAAAAAAAA="},"wrapped":""}`), []byte("pw"))
	f.Add([]byte(`{"kind":"password","kdf":{"time":1,"memory_kib":8,"threads":0,"salt":""},"wrapped":"AA=="}`), []byte("pw"))
	f.Add([]byte(`{"kind":"platform","wrapped":null}`), platform)
	f.Fuzz(func(t *testing.T, data, secret []byte) {
		s, err := DecodeSlot(data)
		if err != nil {
			if !errors.Is(err, ErrBadSlot) {
				t.Fatalf("error %v does not wrap ErrBadSlot", err)
			}
			return
		}
		if !cheapKDF(s.KDF) {
			return
		}
		m, err := s.Unwrap(secret)
		if err != nil {
			if !errors.Is(err, ErrBadSlot) && !errors.Is(err, ErrWrongCredential) {
				t.Fatalf("Unwrap error %v wraps neither ErrBadSlot nor ErrWrongCredential", err)
			}
			return
		}
		if len(m) != MasterSize {
			t.Fatalf("Unwrap returned %d bytes", len(m))
		}
	})
}

// rewrap seals master again under s's (changed) KDF parameters.
func rewrap(s *Slot, secret, master []byte) (*Slot, error) {
	wk, err := wrappingKey(s.Kind, secret, s.KDF)
	if err != nil {
		return nil, err
	}
	aead, err := newAEAD(wk)
	if err != nil {
		return nil, err
	}
	s.Wrapped, err = (&Key{aead: aead}).Seal(nil, master)
	return s, err
}

// FuzzParseRecoveryKey parses arbitrary recovery phrases. A refused one
// is ErrBadRecoveryKey; an accepted one is 32 bytes of entropy whose
// phrase is the input's words, lower case and single-spaced.
func FuzzParseRecoveryKey(f *testing.F) {
	for _, entropy := range [][]byte{bytes.Repeat([]byte{0}, 32), bytes.Repeat([]byte{0xa5}, 32)} {
		words, err := bip39.NewMnemonic(entropy)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(words)
		f.Add("  " + strings.ToUpper(words) + "\n")
		f.Add(strings.Replace(words, "abandon", "abandons", 1))
	}
	f.Add(strings.Repeat("abandon ", 23) + "zoo")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		entropy, err := ParseRecoveryKey(s)
		if err != nil {
			if !errors.Is(err, ErrBadRecoveryKey) {
				t.Fatalf("error %v does not wrap ErrBadRecoveryKey", err)
			}
			return
		}
		if len(entropy) != 32 {
			t.Fatalf("%d bytes of entropy", len(entropy))
		}
		words, err := bip39.NewMnemonic(entropy)
		if err != nil {
			t.Fatal(err)
		}
		if norm := strings.Join(strings.Fields(strings.ToLower(s)), " "); words != norm {
			t.Fatalf("%q parsed to entropy whose phrase is %q", s, words)
		}
	})
}

// FuzzParsePlatformKey parses arbitrary platform keys. A refused one is
// ErrBadPlatformKey; an accepted one is 32 bytes whose hex digits are the
// input's, spaces around it dropped.
func FuzzParsePlatformKey(f *testing.F) {
	for _, s := range []string{strings.Repeat("ab", 32), strings.Repeat("AB", 32) + "\n", " " + strings.Repeat("0", 64), strings.Repeat("0", 63), strings.Repeat("g", 64), ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		key, err := ParsePlatformKey(s)
		if err != nil {
			if !errors.Is(err, ErrBadPlatformKey) {
				t.Fatalf("error %v is not ErrBadPlatformKey", err)
			}
			return
		}
		if len(key) != 32 || hex.EncodeToString(key) != strings.ToLower(strings.TrimSpace(s)) {
			t.Fatalf("%q parsed to %x", s, key)
		}
	})
}
