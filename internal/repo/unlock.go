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

// storedSlot is a decoded key slot and its id under keys/.
type storedSlot struct {
	id   string
	slot *crypt.Slot
}

// readSlots reads and decodes every key slot. Slots that do not decode are
// returned as errors naming them, for messages.
func readSlots(ctx context.Context, st store.Store) ([]storedSlot, []error, error) {
	var slots []storedSlot
	var bad []error
	err := st.List(ctx, KeysPrefix, func(oi store.ObjectInfo) error {
		name := strings.TrimPrefix(oi.Key, KeysPrefix)
		if strings.Contains(name, "/") {
			return nil
		}
		data, err := st.Get(ctx, oi.Key)
		if errors.Is(err, store.ErrNotFound) {
			return nil // removed while we listed
		}
		if err != nil {
			return fmt.Errorf("reading key slot %s: %w", oi.Key, err)
		}
		slot, err := crypt.DecodeSlot(data)
		if err != nil {
			bad = append(bad, fmt.Errorf("%s: %w", oi.Key, err))
			return nil
		}
		slots = append(slots, storedSlot{id: name, slot: slot})
		return nil
	})
	return slots, bad, err
}

// unlock returns the master secret and the id of the slot that gave it:
// kms-platform slots first when creds.KMS is set, then the slots of the
// secret's kind. When nothing opens, the error names each failure.
func unlock(ctx context.Context, st store.Store, repoID string, creds Credentials) ([]byte, string, error) {
	slots, bad, err := readSlots(ctx, st)
	if err != nil {
		return nil, "", err
	}
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

// unlockSecret tries every slot of the secret's kind.
func unlockSecret(slots []storedSlot, bad []error, creds Credentials) ([]byte, string, error) {
	kind, secret, err := creds.secret()
	if err != nil {
		return nil, "", err
	}
	tried := 0
	for _, s := range slots {
		if s.slot.Kind != kind {
			continue
		}
		tried++
		master, err := s.slot.Unwrap(secret)
		if err == nil {
			return master, s.id, nil
		}
		if !errors.Is(err, crypt.ErrWrongCredential) {
			bad = append(bad, fmt.Errorf("%s%s: %w", KeysPrefix, s.id, err))
		}
	}
	if tried == 0 {
		return nil, "", fmt.Errorf("%w: the repository has no %s key slot%s", ErrWrongCredential, kind, joinErrs(bad))
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

func joinErrs(errs []error) string {
	if len(errs) == 0 {
		return ""
	}
	parts := make([]string, len(errs))
	for i, e := range errs {
		parts[i] = e.Error()
	}
	return " (also: " + strings.Join(parts, "; ") + ")"
}
