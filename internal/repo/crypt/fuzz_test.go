package crypt

import (
	"bytes"
	"errors"
	"testing"
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
