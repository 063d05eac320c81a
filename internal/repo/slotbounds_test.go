package repo

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo/crypt"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
	"github.com/cloudstic/cloudstic/internal/store/wrap"
)

// plantedSlot is a password slot a store writer could plant: in-bounds
// argon2id parameters, random bytes as its wrapped key (no password opens
// it).
func plantedSlot(t *testing.T, kdf crypt.KDFParams) *crypt.Slot {
	t.Helper()
	kdf.Salt = bytes.Repeat([]byte{9}, 16)
	wrapped := make([]byte, 12+crypt.MasterSize+16)
	if _, err := rand.Read(wrapped); err != nil {
		t.Fatal(err)
	}
	return &crypt.Slot{Kind: crypt.SlotPassword, KDF: &kdf, Wrapped: wrapped}
}

// TestUnlockOrderBoundsWork plants password slots beside the user's own,
// made with the default parameters: an open tries the user's slot first,
// at most MaxSlotsTried slots, and no more argon2id work (memory x passes,
// summed over the slots tried) than MaxSlotsTried default slots.
func TestUnlockOrderBoundsWork(t *testing.T) {
	t.Parallel()
	own, err := crypt.DefaultKDF()
	if err != nil {
		t.Fatal(err)
	}
	ownSlot := storedSlot{id: "ffff-own", slot: &crypt.Slot{Kind: crypt.SlotPassword, KDF: &own}}
	maxWork := crypt.KDFParams{Time: 6, Memory: 256 << 10, Threads: 4}
	cheap := crypt.KDFParams{Time: 1, Memory: 8, Threads: 1}
	for _, tc := range []struct {
		name      string
		planted   crypt.KDFParams
		n         int
		wantTried int
		// ownFirst: the planted slots differ from ours, which goes first
		// (slots like ours are tried by id, as ours is one of them).
		ownFirst bool
	}{
		{"1,000 slots of the most work allowed", maxWork, 1000, 1 + int(maxUnlockWork-crypt.DefaultKDFWork)/int(maxWork.Work()), true},
		{"1,000 cheap slots", cheap, 1000, MaxSlotsTried, true},
		{"40 slots like ours", own, 40, MaxSlotsTried, false},
		{"3 slots like ours", own, 3, 4, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			slots := []storedSlot{{id: "0000-recovery", slot: &crypt.Slot{Kind: crypt.SlotRecovery}}}
			for i := range tc.n {
				slots = append(slots, storedSlot{id: fmt.Sprintf("%04d", i), slot: plantedSlot(t, tc.planted)})
			}
			slots = append(slots, ownSlot)
			try, total := unlockOrder(slots, crypt.SlotPassword)
			if total != tc.n+1 {
				t.Errorf("total %d password slots, want %d", total, tc.n+1)
			}
			if len(try) != tc.wantTried {
				t.Errorf("%d slots tried, want %d", len(try), tc.wantTried)
			}
			if tc.ownFirst && (len(try) == 0 || try[0].id != ownSlot.id) {
				t.Fatalf("the slot with our parameters is not tried first")
			}
			var work uint64
			for _, s := range try {
				work += s.slot.KDF.Work()
			}
			if work > maxUnlockWork || work > MaxSlotsTried*crypt.DefaultKDFWork {
				t.Errorf("the slots tried cost %d MiB-passes of argon2id, more than %d default slots", work>>10, MaxSlotsTried)
			}
		})
	}
}

// countKeyReads wraps st, counting the key slots read.
func countKeyReads(st store.Store) (store.Store, *atomic.Int64) {
	var n atomic.Int64
	return wrap.NewLogging(st, func(format string, args ...any) {
		if strings.HasPrefix(fmt.Sprintf(format, args...), "store GET "+KeysPrefix) {
			n.Add(1)
		}
	}), &n
}

// putSlot stores s under a fresh random name.
func putSlot(t *testing.T, st store.Store, s *crypt.Slot) {
	t.Helper()
	data, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	name := make([]byte, 16)
	if _, err := rand.Read(name); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(context.Background(), KeysPrefix+hex.EncodeToString(name), data, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestPlantedSlotsRefused plants slots in a local store as a store writer
// would: an open still works with the right password (the user's slot is
// tried first), a wrong password ends after MaxSlotsTried slots with an
// error naming how many there are, and a keys/ directory with more than
// MaxKeySlots objects is refused before any of them is read.
func TestPlantedSlotsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := local.New(t.TempDir())
	if _, _, err := Init(ctx, st, InitOptions{Credentials: Credentials{Password: "pw"}}); err != nil {
		t.Fatal(err)
	}
	const planted = 40
	for range planted {
		putSlot(t, st, plantedSlot(t, crypt.KDFParams{Time: 1, Memory: 8, Threads: 1}))
	}
	if _, err := Open(ctx, st, Credentials{Password: "pw"}); err != nil {
		t.Fatalf("open with the right password among %d planted slots: %v", planted, err)
	}
	_, err := Open(ctx, st, Credentials{Password: "wrong"})
	if !errors.Is(err, ErrWrongCredential) || !errors.Is(err, ErrTooManyKeySlots) || !strings.Contains(err.Error(), fmt.Sprintf("%d password key slots", planted+1)) {
		t.Fatalf("open with a wrong password: %v, want ErrWrongCredential and ErrTooManyKeySlots naming %d slots", err, planted+1)
	}

	for i := range MaxKeySlots {
		if _, err := st.Put(ctx, fmt.Sprintf("%sjunk%04d", KeysPrefix, i), []byte("{}"), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	counted, reads := countKeyReads(st)
	_, err = Open(ctx, counted, Credentials{Password: "pw"})
	if !errors.Is(err, ErrTooManyKeySlots) || !strings.Contains(err.Error(), fmt.Sprintf("more than %d", MaxKeySlots)) {
		t.Fatalf("open with %d objects under keys/: %v, want ErrTooManyKeySlots", MaxKeySlots+planted+1, err)
	}
	if n := reads.Load(); n != 0 {
		t.Errorf("%d key slots read before the listing was refused", n)
	}
	if _, err := ListKeys(ctx, counted); !errors.Is(err, ErrTooManyKeySlots) {
		t.Errorf("ListKeys: %v, want ErrTooManyKeySlots", err)
	}
}
