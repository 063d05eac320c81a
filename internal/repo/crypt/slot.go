package crypt

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	bip39 "github.com/cosmos/go-bip39"
)

// Slot kinds.
const (
	SlotPassword = "password"
	SlotPlatform = "platform"
	SlotRecovery = "recovery"
	// SlotKMS holds the master secret as encrypted by an AWS KMS key; the
	// repository layer unwraps it through KMS (internal/repo/kms).
	SlotKMS = "kms-platform"
)

// Errors from unwrapping key slots.
var (
	// ErrWrongCredential means no slot of the right kind opened with the
	// credential given.
	ErrWrongCredential = errors.New("wrong password or key")
	// ErrBadSlot means a key slot could not be parsed or has unusable
	// parameters.
	ErrBadSlot = errors.New("malformed key slot")
	// ErrBadRecoveryKey means the recovery phrase is not 24 valid BIP39 words.
	ErrBadRecoveryKey = errors.New("invalid recovery key")
	// ErrBadPlatformKey means the platform key is not 64 hex digits.
	ErrBadPlatformKey = errors.New("invalid platform key: want 64 hex digits")
)

// KDFParams are argon2id parameters, stored in each password slot so they
// can be raised later without breaking old slots.
type KDFParams struct {
	Time    uint32 `json:"time"`
	Memory  uint32 `json:"memory_kib"`
	Threads uint8  `json:"threads"`
	Salt    []byte `json:"salt"`
}

// DefaultKDF returns the parameters used for new password slots, with a
// fresh salt: argon2id with 32 MiB, 6 passes and 4 lanes. An attacker's cost
// per guess is memory times passes, the same as RFC 9106's second
// recommended option (64 MiB, 3 passes) and five times OWASP's minimum; the
// time per unlock is the same too. Half the memory keeps every password
// command's peak at that of the work it does (restic's scrypt takes 32 MiB
// as well) and suits small backup hosts. Slots keep their own parameters,
// so older slots still open.
func DefaultKDF() (KDFParams, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return KDFParams{}, err
	}
	return KDFParams{Time: 6, Memory: 32 * 1024, Threads: 4, Salt: salt}, nil
}

// Slot wraps the master secret with one credential. It is stored as plain
// JSON under keys/<id>: it holds nothing but the KDF parameters and the
// sealed master secret.
type Slot struct {
	Kind  string     `json:"kind"`
	Label string     `json:"label,omitempty"`
	KDF   *KDFParams `json:"kdf,omitempty"`
	// KMSKeyARN (kms-platform slots) is the ARN of the KMS key that
	// encrypted Wrapped, as KMS reported it.
	KMSKeyARN string `json:"kms_key_arn,omitempty"`
	// RepositoryID (kms-platform slots) is the repository id of the
	// encryption context. KMS checks the context; this copy only lets a
	// slot moved to another repository be named as such without a request.
	RepositoryID string `json:"repository_id,omitempty"`
	Wrapped      []byte `json:"wrapped"`
}

// NewKMSSlot returns a kms-platform slot holding blob, the master secret as
// KMS key keyARN encrypted it for repository repoID.
func NewKMSSlot(label, keyARN, repoID string, blob []byte) *Slot {
	return &Slot{Kind: SlotKMS, Label: label, KMSKeyARN: keyARN, RepositoryID: repoID, Wrapped: blob}
}

// Bounds a hostile slot cannot exceed. A store writer can plant slots
// (keys/ is plain JSON), and each password slot tried costs its argon2id
// work, so the bounds are those of the parameters this and earlier
// versions give new slots (32 MiB x 6 passes, 64 MiB x 3, 4 lanes; see
// DefaultKDF) times a safety margin, not argon2's limits: a slot that
// passes costs at most MaxKDFWork, 8 default unlocks (under a second on a
// laptop core; the repository layer also bounds the slots one open tries).
const (
	maxKDFMemoryKiB = 256 << 10 // 256 MiB: 8 x the default, 4 x the earlier 64 MiB
	maxKDFTime      = 16        // passes
	maxKDFThreads   = 16        // lanes: 4 x the default
	minKDFSalt      = 8
	maxKDFSalt      = 64
	// MaxKDFWork bounds one slot's memory x passes, in KiB-passes: 8
	// times DefaultKDFWork.
	MaxKDFWork = 8 * DefaultKDFWork
	// DefaultKDFWork is the memory x passes of DefaultKDF (and of the
	// earlier 64 MiB x 3), in KiB-passes.
	DefaultKDFWork = 6 * 32 * 1024
)

// Work is the cost of deriving a key with p: its memory (KiB) times its
// passes. argon2id's time and the memory an attacker needs per guess both
// grow with it; the lanes only spread it over cores.
func (p KDFParams) Work() uint64 { return uint64(p.Time) * uint64(p.Memory) }

// Standard says whether p are the parameters this version or an earlier
// one gave new password slots (a 16-byte salt, 4 lanes, and 32 MiB x 6
// passes or 64 MiB x 3): slots an open tries before any other.
func (p KDFParams) Standard() bool {
	if len(p.Salt) != 16 || p.Threads != 4 {
		return false
	}
	return (p.Time == 6 && p.Memory == 32*1024) || (p.Time == 3 && p.Memory == 64*1024)
}

func (p KDFParams) check() error {
	switch {
	case p.Time == 0 || p.Time > maxKDFTime:
		return fmt.Errorf("%w: argon2id passes %d out of range (1-%d)", ErrBadSlot, p.Time, maxKDFTime)
	case p.Memory < 8 || p.Memory > maxKDFMemoryKiB:
		return fmt.Errorf("%w: argon2id memory %d KiB out of range (8 KiB-%d MiB)", ErrBadSlot, p.Memory, maxKDFMemoryKiB>>10)
	case p.Work() > MaxKDFWork:
		return fmt.Errorf("%w: argon2id memory x passes %d MiB out of range (at most %d MiB)", ErrBadSlot, p.Work()>>10, MaxKDFWork>>10)
	case p.Threads == 0 || p.Threads > maxKDFThreads:
		return fmt.Errorf("%w: argon2id lanes %d out of range (1-%d)", ErrBadSlot, p.Threads, maxKDFThreads)
	case len(p.Salt) < minKDFSalt || len(p.Salt) > maxKDFSalt:
		return fmt.Errorf("%w: argon2id salt of %d bytes (want %d-%d)", ErrBadSlot, len(p.Salt), minKDFSalt, maxKDFSalt)
	}
	return nil
}

func wrappingKey(kind string, secret []byte, kdf *KDFParams) ([]byte, error) {
	switch kind {
	case SlotPassword:
		if kdf == nil {
			return nil, fmt.Errorf("%w: password slot without KDF parameters", ErrBadSlot)
		}
		if err := kdf.check(); err != nil {
			return nil, err
		}
		return passwordKey(secret, kdf), nil
	case SlotPlatform, SlotRecovery:
		return derive(secret, "slot "+kind), nil
	case SlotKMS:
		return nil, fmt.Errorf("%w: a kms-platform slot is opened through KMS, not with a local secret", ErrBadSlot)
	default:
		return nil, fmt.Errorf("%w: unknown kind %q", ErrBadSlot, kind)
	}
}

// NewSlot wraps master with a credential of the given kind. secret is the
// password, the 32-byte platform key, or the 32-byte recovery entropy.
func NewSlot(kind, label string, secret, master []byte) (*Slot, error) {
	s := &Slot{Kind: kind, Label: label}
	if kind == SlotPassword {
		p, err := DefaultKDF()
		if err != nil {
			return nil, err
		}
		s.KDF = &p
	}
	wk, err := wrappingKey(kind, secret, s.KDF)
	if err != nil {
		return nil, err
	}
	aead, err := newAEAD(wk)
	if err != nil {
		return nil, err
	}
	k := &Key{aead: aead}
	s.Wrapped, err = k.Seal(nil, master)
	return s, err
}

// Unwrap returns the master secret if secret opens this slot.
func (s *Slot) Unwrap(secret []byte) ([]byte, error) {
	wk, err := wrappingKey(s.Kind, secret, s.KDF)
	if err != nil {
		return nil, err
	}
	aead, err := newAEAD(wk)
	if err != nil {
		return nil, err
	}
	master, err := (&Key{aead: aead}).Open(nil, s.Wrapped)
	if err != nil {
		return nil, ErrWrongCredential
	}
	if len(master) != MasterSize {
		return nil, fmt.Errorf("%w: wrapped key has %d bytes", ErrBadSlot, len(master))
	}
	return master, nil
}

// DecodeSlot parses a stored slot, refusing (with ErrBadSlot) a password
// slot whose argon2id parameters are out of bounds.
func DecodeSlot(data []byte) (*Slot, error) {
	var s Slot
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadSlot, err)
	}
	switch s.Kind {
	case SlotPassword:
		// Checked here, not only before the KDF runs: a slot nobody can
		// open within the bounds is malformed wherever it is read.
		if s.KDF == nil {
			return nil, fmt.Errorf("%w: password slot without KDF parameters", ErrBadSlot)
		}
		if err := s.KDF.check(); err != nil {
			return nil, err
		}
	case SlotPlatform, SlotRecovery:
	case SlotKMS:
		if s.KMSKeyARN == "" || len(s.Wrapped) == 0 {
			return nil, fmt.Errorf("%w: kms-platform slot without a key ARN or ciphertext", ErrBadSlot)
		}
	default:
		return nil, fmt.Errorf("%w: unknown kind %q", ErrBadSlot, s.Kind)
	}
	return &s, nil
}

// MaxSlotSize bounds a stored key slot, and every read of one: ours are
// under 1 KiB of JSON (a KMS ciphertext, the longest field, is a few
// hundred bytes), so anything larger was not written by us.
const MaxSlotSize = 64 << 10

// ErrSlotTooLarge means a slot to be stored would be over MaxSlotSize (a
// label of tens of KiB), and so unreadable.
var ErrSlotTooLarge = errors.New("key slot too large")

// Encode serialises the slot, refusing one over MaxSlotSize.
func (s *Slot) Encode() ([]byte, error) {
	data, err := json.MarshalIndent(s, "", "  ")
	if err == nil && len(data) > MaxSlotSize {
		return nil, fmt.Errorf("%w: %d bytes, over %d (label of %d bytes)", ErrSlotTooLarge, len(data), MaxSlotSize, len(s.Label))
	}
	return data, err
}

// ParsePlatformKey decodes a 64-hex-digit platform key.
func ParsePlatformKey(s string) ([]byte, error) {
	b, err := hex.DecodeString(strings.TrimSpace(s))
	if err != nil || len(b) != 32 {
		return nil, ErrBadPlatformKey
	}
	return b, nil
}

// NewRecoveryKey returns 32 random bytes and their 24-word BIP39 phrase.
func NewRecoveryKey() (entropy []byte, words string, err error) {
	entropy, err = bip39.NewEntropy(256)
	if err != nil {
		return nil, "", err
	}
	words, err = bip39.NewMnemonic(entropy)
	return entropy, words, err
}

// ParseRecoveryKey turns a 24-word phrase back into its 32 bytes of entropy,
// checking the words and the checksum.
func ParseRecoveryKey(words string) ([]byte, error) {
	norm := strings.Join(strings.Fields(strings.ToLower(words)), " ")
	if len(strings.Fields(norm)) != 24 {
		return nil, fmt.Errorf("%w: want 24 words", ErrBadRecoveryKey)
	}
	if !bip39.IsMnemonicValid(norm) {
		return nil, fmt.Errorf("%w: unknown word or bad checksum", ErrBadRecoveryKey)
	}
	// MnemonicToByteArray returns the entropy followed by one checksum byte.
	withSum, err := bip39.MnemonicToByteArray(norm)
	if err != nil || len(withSum) != 33 {
		return nil, fmt.Errorf("%w: bad checksum", ErrBadRecoveryKey)
	}
	return withSum[:32], nil
}
