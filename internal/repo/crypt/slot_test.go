package crypt

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestPasswordSlots opens password slots made now and one made by an earlier
// release with other argon2id parameters (64 MiB, 3 passes): each slot is
// opened with the parameters it stores, whatever the current default.
func TestPasswordSlots(t *testing.T) {
	master := bytes.Repeat([]byte{7}, MasterSize)
	fresh, err := NewSlot(SlotPassword, "new", []byte("correct horse"), master)
	if err != nil {
		t.Fatal(err)
	}
	if fresh.KDF.Memory != 32*1024 || fresh.KDF.Time != 6 || fresh.KDF.Threads != 4 {
		t.Fatalf("new slot KDF = %+v, want 32 MiB, 6 passes, 4 lanes", *fresh.KDF)
	}
	freshJSON, err := fresh.Encode()
	if err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile("testdata/slot-argon2id-t3-m64.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		slot     []byte
		password string
		want     error
	}{
		{"current default", freshJSON, "correct horse", nil},
		{"current default, wrong password", freshJSON, "correct horse!", ErrWrongCredential},
		{"earlier release, 64 MiB", old, "correct horse", nil},
		{"earlier release, wrong password", old, "battery staple", ErrWrongCredential},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := DecodeSlot(tc.slot)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Unwrap([]byte(tc.password))
			if !errors.Is(err, tc.want) {
				t.Fatalf("Unwrap error = %v, want %v", err, tc.want)
			}
			if tc.want == nil && !bytes.Equal(got, master) {
				t.Fatal("Unwrap returned another master secret")
			}
		})
	}
}

// TestKDFBounds decodes password slots a store writer could plant: those
// asking for more argon2id work than MaxKDFWork (the 1 GiB x 64 passes
// the old bounds allowed among them) are malformed at decode, before any
// KDF runs; ours, an earlier release's and the largest allowed decode.
func TestKDFBounds(t *testing.T) {
	const salt16 = `"AAAAAAAAAAAAAAAAAAAAAA=="`
	slot := func(time, memKiB, threads int, salt string) []byte {
		return fmt.Appendf(nil, `{"kind":"password","kdf":{"time":%d,"memory_kib":%d,"threads":%d,"salt":%s},"wrapped":"AA=="}`,
			time, memKiB, threads, salt)
	}
	for _, tc := range []struct {
		name     string
		slot     []byte
		ok       bool
		standard bool
	}{
		{"ours", slot(6, 32<<10, 4, salt16), true, true},
		{"earlier release", slot(3, 64<<10, 4, salt16), true, true},
		{"largest memory at its most passes", slot(6, 256<<10, 4, salt16), true, false},
		{"most passes", slot(16, 96<<10, 16, salt16), true, false},
		{"1 GiB x 64 passes", slot(64, 1<<20, 4, salt16), false, false},
		{"512 MiB x 1", slot(1, 512<<10, 4, salt16), false, false},
		{"256 MiB x 7: over the work bound", slot(7, 256<<10, 4, salt16), false, false},
		{"17 passes", slot(17, 8<<10, 4, salt16), false, false},
		{"255 lanes", slot(1, 8<<10, 255, salt16), false, false},
		{"1,000-byte salt", slot(1, 8<<10, 4, `"`+strings.Repeat("A", 1336)+`"`), false, false},
		{"no kdf", []byte(`{"kind":"password","wrapped":"AA=="}`), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := DecodeSlot(tc.slot)
			if tc.ok != (err == nil) || (err != nil && !errors.Is(err, ErrBadSlot)) {
				t.Fatalf("DecodeSlot: %v, want accepted %v (else ErrBadSlot)", err, tc.ok)
			}
			if err == nil && s.KDF.Standard() != tc.standard {
				t.Errorf("Standard() = %v, want %v", s.KDF.Standard(), tc.standard)
			}
		})
	}
	p, err := DefaultKDF()
	if err != nil {
		t.Fatal(err)
	}
	if !p.Standard() || p.Work() != DefaultKDFWork || p.check() != nil {
		t.Errorf("DefaultKDF %+v: standard %v, work %d, check %v; want standard, %d, nil", p, p.Standard(), p.Work(), p.check(), DefaultKDFWork)
	}
}

// TestSlotSizeBound: a slot is stored only when it fits MaxSlotSize, the
// bound every read of a slot has (a label of 64 KiB does not).
func TestSlotSizeBound(t *testing.T) {
	for _, tc := range []struct {
		label string
		ok    bool
	}{
		{"laptop", true},
		{strings.Repeat("x", MaxSlotSize), false},
	} {
		data, err := NewKMSSlot(tc.label, "arn:aws:kms:eu-west-1:1:key/k", "repo", make([]byte, 200)).Encode()
		if tc.ok != (err == nil) || (err != nil && !errors.Is(err, ErrSlotTooLarge)) || len(data) > MaxSlotSize {
			t.Errorf("label of %d bytes: %d bytes, %v", len(tc.label), len(data), err)
		}
	}
}
