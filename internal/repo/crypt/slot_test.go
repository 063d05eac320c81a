package crypt

import (
	"bytes"
	"errors"
	"os"
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
