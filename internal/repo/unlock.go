package repo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/cloudstic/cloudstic/internal/repo/crypt"
	"github.com/cloudstic/cloudstic/internal/repo/kms"
	"github.com/cloudstic/cloudstic/internal/store"
)

// Bounds on the key slots one open reads and tries. keys/ is plain JSON a
// store writer can add to: without them, a thousand planted password
// slots would make every open run a thousand argon2id derivations, and a
// million junk objects a million reads.
const (
	// MaxKeySlots is the most objects under keys/ a repository may hold;
	// a repository has one per password or key.
	MaxKeySlots = 256
	// MaxSlotsTried is the most slots of the credential's kind one open
	// tries (password slots in the order of unlockOrder).
	MaxSlotsTried = 32
	// maxUnlockWork bounds the argon2id work (memory x passes, KiB-passes)
	// of the password slots one open tries: that of MaxSlotsTried slots
	// with the default parameters.
	maxUnlockWork = MaxSlotsTried * crypt.DefaultKDFWork
)

// ErrTooManyKeySlots means keys/ holds more objects than MaxKeySlots, or
// more slots of the credential's kind than an open tries and none of those
// tried opened.
var ErrTooManyKeySlots = errors.New("too many key slots")

// errStopListing ends a listing early from its callback.
var errStopListing = errors.New("stop listing")

// storedSlot is a decoded key slot and its id under keys/.
type storedSlot struct {
	id   string
	slot *crypt.Slot
}

// listSlotKeys lists the key slots' objects, refusing more than
// MaxKeySlots without listing further.
func listSlotKeys(ctx context.Context, st store.Store) ([]store.ObjectInfo, error) {
	var infos []store.ObjectInfo
	err := st.List(ctx, KeysPrefix, func(oi store.ObjectInfo) error {
		if strings.Contains(strings.TrimPrefix(oi.Key, KeysPrefix), "/") {
			return nil
		}
		if len(infos) == MaxKeySlots {
			return errStopListing
		}
		infos = append(infos, oi)
		return nil
	})
	switch {
	case errors.Is(err, errStopListing):
		return nil, fmt.Errorf("%w: %s holds more than %d objects, and a repository has one per password or key: "+
			"someone with write access to the store added them; remove those that are not key slots you made", ErrTooManyKeySlots, KeysPrefix, MaxKeySlots)
	case err != nil:
		return nil, fmt.Errorf("listing key slots: %w", err)
	}
	return infos, nil
}

// slotRead is what readSlots found: the slots that decode, errors naming
// the objects under keys/ that do not (for messages), or the error that
// stopped the reading.
type slotRead struct {
	slots []storedSlot
	bad   []error
	err   error
}

// readSlots lists keys/ and reads and decodes each slot in it.
func readSlots(ctx context.Context, st store.Store) slotRead {
	infos, err := listSlotKeys(ctx, st)
	if err != nil {
		return slotRead{err: err}
	}
	var slots []storedSlot
	var bad []error
	for _, oi := range infos {
		name := strings.TrimPrefix(oi.Key, KeysPrefix)
		data, err := st.Get(ctx, oi.Key, crypt.MaxSlotSize)
		if errors.Is(err, store.ErrNotFound) {
			continue // removed while we listed
		}
		if unreadableSlot(err) {
			bad = append(bad, err) // names the object
			continue
		}
		if err != nil {
			return slotRead{err: fmt.Errorf("reading key slot %s: %w", oi.Key, err)}
		}
		slot, err := crypt.DecodeSlot(data)
		if err != nil {
			bad = append(bad, fmt.Errorf("%s: %w", oi.Key, err))
			continue
		}
		slots = append(slots, storedSlot{id: name, slot: slot})
	}
	return slotRead{slots: slots, bad: bad}
}

// unlockOrder returns the slots of kind an open tries, in order, and how
// many slots of that kind there are. Password slots with the parameters
// we make go first, then the others cheapest first (ties by id); at most
// MaxSlotsTried are tried, and no more than maxUnlockWork of argon2id in
// all, so planted slots cost an open a bounded time whatever they ask for.
func unlockOrder(slots []storedSlot, kind string) (try []storedSlot, total int) {
	for _, s := range slots {
		if s.slot.Kind == kind {
			try = append(try, s)
		}
	}
	total = len(try)
	if kind == crypt.SlotPassword {
		sort.SliceStable(try, func(i, j int) bool {
			a, b := try[i].slot.KDF, try[j].slot.KDF
			if a.Standard() != b.Standard() {
				return a.Standard()
			}
			if a.Work() != b.Work() {
				return a.Work() < b.Work()
			}
			return try[i].id < try[j].id
		})
	}
	var work uint64
	for i, s := range try {
		if s.slot.KDF != nil {
			work += s.slot.KDF.Work()
		}
		if i == MaxSlotsTried || work > maxUnlockWork {
			return try[:i], total
		}
	}
	return try, total
}

// unreadableSlot tells whether err means that an object under keys/ is
// there but is no slot to read: larger than any slot (store.ErrTooLarge)
// or not a regular file (store.ErrNotRegular). Like a slot that does not
// decode, it is reported, and the other slots are tried.
func unreadableSlot(err error) bool {
	return errors.Is(err, store.ErrTooLarge) || errors.Is(err, store.ErrNotRegular)
}

// unlock returns the master secret and the id of the slot that gave it,
// from the slots read:
// kms-platform slots first when creds.KMS is set, then the slots of the
// secret's kind. When nothing opens, the error names each failure.
func unlock(ctx context.Context, read slotRead, repoID string, creds Credentials) ([]byte, string, error) {
	if read.err != nil {
		return nil, "", read.err
	}
	slots, bad := read.slots, read.bad
	var failures []error
	if creds.KMS != nil {
		master, id, err := unlockKMS(ctx, slots, repoID, creds.KMS)
		if err == nil {
			return master, id, nil
		}
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		failures = append(failures, err)
	}
	if creds.hasSecret() {
		master, id, err := unlockSecret(slots, bad, creds)
		if err == nil {
			return master, id, nil
		}
		failures = append(failures, err)
	}
	switch len(failures) {
	case 0:
		return nil, "", ErrNeedCredential
	case 1:
		return nil, "", failures[0]
	}
	return nil, "", fmt.Errorf("%w; and %w", failures[0], failures[1])
}

// unlockSecret tries the slots of the secret's kind unlockOrder picks.
func unlockSecret(slots []storedSlot, bad []error, creds Credentials) ([]byte, string, error) {
	kind, secret, err := creds.secret()
	if err != nil {
		return nil, "", err
	}
	try, total := unlockOrder(slots, kind)
	for _, s := range try {
		master, err := s.slot.Unwrap(secret)
		if err == nil {
			return master, s.id, nil
		}
		if !errors.Is(err, crypt.ErrWrongCredential) {
			bad = append(bad, fmt.Errorf("%s%s: %w", KeysPrefix, s.id, err))
		}
	}
	switch {
	case total == 0:
		return nil, "", fmt.Errorf("%w: the repository has no %s key slot%s", ErrWrongCredential, kind, joinErrs(bad))
	case len(try) < total:
		return nil, "", fmt.Errorf("%w, or its slot was not tried (%w: the repository has %d %s key slots, and an open tries "+
			"%d of them: at most %d, ours first, then the cheapest, within the argon2id work of %d default slots)%s",
			ErrWrongCredential, ErrTooManyKeySlots, total, kind, len(try), MaxSlotsTried, MaxSlotsTried, joinErrs(bad))
	}
	return nil, "", fmt.Errorf("%w%s", ErrWrongCredential, joinErrs(bad))
}

// unlockKMS tries the kms-platform slots, those made by the key given
// first. Only an unreachable KMS stops the search early.
func unlockKMS(ctx context.Context, slots []storedSlot, repoID string, c *kms.Client) ([]byte, string, error) {
	var kmsSlots []storedSlot
	for _, s := range slots {
		if s.slot.Kind == crypt.SlotKMS {
			kmsSlots = append(kmsSlots, s)
		}
	}
	if len(kmsSlots) == 0 {
		return nil, "", fmt.Errorf("%w: the repository has no %s key slot", ErrWrongCredential, crypt.SlotKMS)
	}
	sort.SliceStable(kmsSlots, func(i, j int) bool {
		return kmsSlots[i].slot.KMSKeyARN == c.KeyARN() && kmsSlots[j].slot.KMSKeyARN != c.KeyARN()
	})
	// Each slot tried is a KMS request.
	kmsSlots = kmsSlots[:min(len(kmsSlots), MaxSlotsTried)]
	var errs []error
	for _, s := range kmsSlots {
		master, err := openKMSSlot(ctx, s, repoID, c)
		if err == nil {
			return master, s.id, nil
		}
		if errors.Is(err, kms.ErrUnreachable) || ctx.Err() != nil {
			return nil, "", err
		}
		errs = append(errs, err)
	}
	// The first error is that of a slot made by the key given, when there
	// is one: the most telling.
	if len(errs) > 1 {
		return nil, "", fmt.Errorf("%w (and %d more kms-platform slots did not open)", errs[0], len(errs)-1)
	}
	return nil, "", errs[0]
}

// openKMSSlot asks KMS to decrypt one slot for this repository.
func openKMSSlot(ctx context.Context, s storedSlot, repoID string, c *kms.Client) ([]byte, error) {
	name := s.id[:min(8, len(s.id))]
	if s.slot.RepositoryID != "" && s.slot.RepositoryID != repoID {
		return nil, fmt.Errorf("key slot %s: %w (it names repository %s, this is %s)", name, kms.ErrContextMismatch, s.slot.RepositoryID, repoID)
	}
	master, err := c.Decrypt(ctx, s.slot.Wrapped, repoID)
	sameKey := s.slot.KMSKeyARN == c.KeyARN()
	switch {
	case err != nil && !sameKey && (errors.Is(err, kms.ErrWrongKey) || errors.Is(err, kms.ErrContextMismatch)):
		// A server may report another key's ciphertext as invalid rather
		// than as the wrong key; the ARNs tell which it is.
		return nil, fmt.Errorf("key slot %s is wrapped by %s, not %s: %w", name, s.slot.KMSKeyARN, c.KeyARN(), kms.ErrWrongKey)
	case err != nil:
		return nil, fmt.Errorf("key slot %s: %w", name, err)
	case len(master) != crypt.MasterSize:
		return nil, fmt.Errorf("key slot %s: %w: KMS returned %d bytes", name, crypt.ErrBadSlot, len(master))
	}
	return master, nil
}

// addKMSSlot encrypts master with c for repository repoID, checks that KMS
// decrypts it back (a key we may encrypt with but not decrypt with would
// make a slot nobody can open), and stores the slot.
func addKMSSlot(ctx context.Context, st store.Store, c *kms.Client, label, repoID string, master []byte) error {
	blob, keyARN, err := c.Encrypt(ctx, master, repoID)
	if err != nil {
		return err
	}
	back, err := c.Decrypt(ctx, blob, repoID)
	if err != nil {
		return fmt.Errorf("the new kms-platform slot does not decrypt: %w", err)
	}
	if !bytes.Equal(back, master) {
		return errors.New("kms: decrypting the new kms-platform slot gave other bytes")
	}
	if keyARN == "" {
		keyARN = c.KeyARN()
	}
	return writeSlot(ctx, st, crypt.NewKMSSlot(label, keyARN, repoID, blob))
}

// joinErrs renders the first few of errs for a message ("" for none).
func joinErrs(errs []error) string {
	const shown = 3
	if len(errs) == 0 {
		return ""
	}
	var parts []string
	for _, e := range errs[:min(shown, len(errs))] {
		parts = append(parts, e.Error())
	}
	if len(errs) > shown {
		parts = append(parts, fmt.Sprintf("and %d more", len(errs)-shown))
	}
	return " (also: " + strings.Join(parts, "; ") + ")"
}
