package repo

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo/crypt"
	"github.com/cloudstic/cloudstic/internal/repo/kms"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/store"
)

// Errors of managing key slots.
var (
	// ErrLastKey means removing the slot would leave the repository with
	// no way to open it.
	ErrLastKey = errors.New("cannot remove the last key slot")
	// ErrKeyNotFound means no slot matches the label or id given.
	ErrKeyNotFound = errors.New("no such key slot")
	// ErrKeyAmbiguous means a label or id prefix matches several slots.
	ErrKeyAmbiguous = errors.New("key slot reference is ambiguous")
	// ErrLabelTaken means another slot already has the label.
	ErrLabelTaken = errors.New("key slot label already in use")
	// ErrNotEncrypted means the repository has no key slots at all.
	ErrNotEncrypted = errors.New("repository is not encrypted: it has no keys")
)

// KeySlot describes one stored key slot (no secret material).
type KeySlot struct {
	// ID is the hex name of the slot under keys/.
	ID      string    `json:"id"`
	Kind    string    `json:"kind"`
	Label   string    `json:"label"`
	Created time.Time `json:"created"`
	// KMSKeyARN is the KMS key of a kms-platform slot.
	KMSKeyARN string `json:"kms_key_arn,omitempty"`
	// Current is set on the slot the keyring was opened with.
	Current bool `json:"current"`
	// Err is set when the slot could not be read or parsed.
	Err error `json:"-"`
}

// Key returns the slot's store key.
func (k KeySlot) Key() string { return KeysPrefix + k.ID }

// ListKeys returns every key slot, oldest first (ties by id). Slots that
// cannot be parsed are listed with Err set. More than MaxKeySlots objects
// under keys/ are refused with ErrTooManyKeySlots.
func ListKeys(ctx context.Context, st store.Store) ([]KeySlot, error) {
	infos, err := listSlotKeys(ctx, st)
	if err != nil {
		return nil, err
	}
	out := make([]KeySlot, 0, len(infos))
	for _, oi := range infos {
		k := KeySlot{ID: strings.TrimPrefix(oi.Key, KeysPrefix), Created: oi.ModTime}
		data, err := st.Get(ctx, oi.Key, crypt.MaxSlotSize)
		switch {
		case errors.Is(err, store.ErrNotFound):
			continue // removed while we listed
		case unreadableSlot(err):
			k.Err = err
			out = append(out, k)
			continue
		case err != nil:
			return nil, fmt.Errorf("reading key slot %s: %w", oi.Key, err)
		}
		if slot, err := crypt.DecodeSlot(data); err != nil {
			k.Err = err
		} else {
			k.Kind, k.Label, k.KMSKeyARN = slot.Kind, slot.Label, slot.KMSKeyARN
		}
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.Before(out[j].Created)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// Keyring is an unlocked set of key slots: it holds the master secret, so
// it can add slots, and knows which slot it was opened with.
type Keyring struct {
	st      store.Store
	repoID  string
	master  []byte
	current string // id of the slot that opened
}

// OpenKeyring unlocks the repository's master secret with creds. As
// Open, it refuses a config that fails its MAC, and an unencrypted config
// beside key slots (ErrDowngrade); a truly unencrypted repository is
// ErrNotEncrypted.
func OpenKeyring(ctx context.Context, st store.Store, creds Credentials) (*Keyring, error) {
	head, err := ReadHead(ctx, st)
	if err != nil {
		return nil, err
	}
	cfg := head.Config
	read := head.slots() // also when not needed: nothing ReadHead started outlives the open
	if !cfg.Encrypted {
		// Credentials are always asked for here, so only key slots tell a
		// switched-off repository from one made without encryption.
		if err := checkUnencrypted(ctx, st, Credentials{}); err != nil {
			return nil, err
		}
		return nil, ErrNotEncrypted
	}
	if creds.Empty() {
		return nil, ErrNeedCredential
	}
	master, id, err := unlock(ctx, read, cfg.ID, creds)
	if err != nil {
		return nil, err
	}
	key, err := crypt.FromMaster(master)
	if err != nil {
		return nil, err
	}
	if _, err := cfg.verify(key); err != nil {
		return nil, fmt.Errorf("%s: %w", store.Describe(st), err)
	}
	return &Keyring{st: st, repoID: cfg.ID, master: master, current: id}, nil
}

// Current returns the id of the slot the keyring was opened with.
func (k *Keyring) Current() string { return k.current }

// List returns every slot, marking the current one.
func (k *Keyring) List(ctx context.Context) ([]KeySlot, error) {
	slots, err := ListKeys(ctx, k.st)
	for i := range slots {
		slots[i].Current = slots[i].ID == k.current
	}
	return slots, err
}

// addSlot stores a new slot of the given kind (crypt.SlotPassword,
// SlotPlatform or SlotRecovery) wrapping the master secret with secret.
// Labels are unique; an empty label becomes "<kind> N".
func (k *Keyring) addSlot(ctx context.Context, kind, label string, secret []byte) (KeySlot, error) {
	return k.add(ctx, kind, label, func(label string) error {
		return addSecretSlot(ctx, k.st, kind, label, secret, k.master)
	})
}

// addKMS stores a new kms-platform slot: the master secret encrypted by
// c's key for this repository (checked to decrypt back first).
func (k *Keyring) addKMS(ctx context.Context, c *kms.Client, label string) (KeySlot, error) {
	return k.add(ctx, crypt.SlotKMS, label, func(label string) error {
		return addKMSSlot(ctx, k.st, c, label, k.repoID, k.master)
	})
}

// add resolves the label of a new slot of kind, lets write store it, and
// returns it as listed.
func (k *Keyring) add(ctx context.Context, kind, label string, write func(label string) error) (KeySlot, error) {
	slots, err := ListKeys(ctx, k.st)
	if err != nil {
		return KeySlot{}, err
	}
	taken := map[string]bool{}
	for _, s := range slots {
		taken[s.Label] = true
	}
	if label == "" {
		for n := 1; ; n++ {
			if label = fmt.Sprintf("%s %d", kind, n); !taken[label] {
				break
			}
		}
	} else if taken[label] {
		return KeySlot{}, fmt.Errorf("%w: %q", ErrLabelTaken, label)
	}
	before := map[string]bool{}
	for _, s := range slots {
		before[s.ID] = true
	}
	if err := write(label); err != nil {
		return KeySlot{}, err
	}
	after, err := ListKeys(ctx, k.st)
	if err != nil {
		return KeySlot{}, err
	}
	for _, s := range after {
		if !before[s.ID] && s.Label == label {
			return s, nil
		}
	}
	return KeySlot{}, fmt.Errorf("key slot %q was written but is not listed", label)
}

// Find resolves ref, a label or an id prefix, to one slot.
func (k *Keyring) Find(ctx context.Context, ref string) (KeySlot, error) {
	slots, err := k.List(ctx)
	if err != nil {
		return KeySlot{}, err
	}
	return findKey(slots, ref)
}

func findKey(slots []KeySlot, ref string) (KeySlot, error) {
	var byLabel, byID []KeySlot
	for _, s := range slots {
		if s.Label == ref {
			byLabel = append(byLabel, s)
		}
		if ref != "" && strings.HasPrefix(s.ID, strings.ToLower(ref)) {
			byID = append(byID, s)
		}
	}
	found := byLabel
	if len(found) == 0 {
		found = byID
	}
	switch len(found) {
	case 0:
		return KeySlot{}, fmt.Errorf("%w: %q", ErrKeyNotFound, ref)
	case 1:
		return found[0], nil
	}
	return KeySlot{}, fmt.Errorf("%w: %q matches %d slots; give the slot id", ErrKeyAmbiguous, ref, len(found))
}

// KeyringWriter removes key slots, under the exclusive lock: two removals
// at once could each see the other's slot and together delete the last
// key, and with it the repository. Every store request it makes goes
// through the lease's fence.
type KeyringWriter struct {
	k     *Keyring // the keyring seen through the fence
	from  *Keyring // the keyring it was made from (ChangePassword moves its current slot)
	lease *lock.Lock
}

// ExclusiveWriter returns a writer on the keyring under lease, the
// exclusive lock; ErrNoLease without a lease, ErrSharedLease with a shared
// one.
func (k *Keyring) ExclusiveWriter(lease *lock.Lock) (*KeyringWriter, error) {
	if err := requireLease(lease, true); err != nil {
		return nil, err
	}
	fenced := &Keyring{st: lease.Fence(k.st), repoID: k.repoID, master: k.master, current: k.current}
	return &KeyringWriter{k: fenced, from: k, lease: lease}, nil
}

// Find resolves ref, a label or an id prefix, to one slot, reading
// through the fence.
func (w *KeyringWriter) Find(ctx context.Context, ref string) (KeySlot, error) {
	return w.k.Find(ctx, ref)
}

// Remove deletes the slot with the given id, refusing when no other
// usable slot would remain.
func (w *KeyringWriter) Remove(ctx context.Context, slotID string) error {
	slots, err := ListKeys(ctx, w.k.st)
	if err != nil {
		return err
	}
	found, others := false, 0
	for _, s := range slots {
		switch {
		case s.ID == slotID:
			found = true
		case s.Err == nil:
			others++
		}
	}
	if !found {
		return fmt.Errorf("%w: %q", ErrKeyNotFound, slotID)
	}
	if others == 0 {
		return ErrLastKey
	}
	if err := w.lease.Check(ctx); err != nil {
		return fmt.Errorf("before removing key slot %s: %w", slotID, err)
	}
	if err := w.k.st.Delete(ctx, KeysPrefix+slotID); err != nil {
		return fmt.Errorf("removing key slot %s: %w", slotID, err)
	}
	return nil
}

// ChangePassword replaces the current slot with a password slot for
// newPassword: the new slot is written first, then the old one removed, so
// an interruption leaves both, never neither. label names the new slot
// (empty: "password N").
func (w *KeyringWriter) ChangePassword(ctx context.Context, newPassword, label string) (KeySlot, error) {
	if newPassword == "" {
		return KeySlot{}, errors.New("the new password is empty")
	}
	old, err := w.k.Find(ctx, w.k.current)
	if err != nil {
		return KeySlot{}, err
	}
	added, err := w.k.addSlot(ctx, crypt.SlotPassword, label, []byte(newPassword))
	if err != nil {
		return KeySlot{}, err
	}
	if err := w.Remove(ctx, old.ID); err != nil {
		return added, fmt.Errorf("new password slot %s added, but the old slot %s was not removed: %w", added.ID, old.ID, err)
	}
	w.k.current, w.from.current = added.ID, added.ID
	return added, nil
}
