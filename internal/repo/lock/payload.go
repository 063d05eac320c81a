package lock

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// timeLayout is RFC 3339 with a fixed nine-digit fraction, always in UTC, as
// in the seed's example ("2026-03-07T09:00:00.000000000Z"). It sorts
// lexically and time.RFC3339Nano parses it.
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

// MaxPayload bounds a lock object, and every read of one: anything larger
// is not a lock we wrote (ours are a few hundred bytes: two short strings,
// two times, a nonce), and is never read whole (see unreadable).
const MaxPayload = 64 << 10

// payload is the content of one lock object.
type payload struct {
	Operation  string
	Holder     string
	AcquiredAt time.Time
	ExpiresAt  time.Time
	IsShared   bool
	// Nonce is random per write (an extra field, ignored by the seed's
	// readers): no two writes have the same bytes, so comparing content,
	// or an S3 ETag (an MD5 of it), tells every write apart.
	Nonce string
	// Process identifies the writing process (nil when not recorded, or
	// written by another implementation): see procID.
	Process *procID
}

// wireOut is the JSON form written to the store (field order as the seed).
type wireOut struct {
	Operation  string  `json:"operation"`
	Holder     string  `json:"holder"`
	AcquiredAt string  `json:"acquired_at"`
	ExpiresAt  string  `json:"expires_at"`
	IsShared   bool    `json:"is_shared"`
	Nonce      string  `json:"nonce,omitempty"`
	Process    *procID `json:"process,omitempty"`
}

// wireIn is the JSON form read back; pointers tell missing fields apart.
type wireIn struct {
	Operation  *string `json:"operation"`
	Holder     *string `json:"holder"`
	AcquiredAt *string `json:"acquired_at"`
	ExpiresAt  *string `json:"expires_at"`
	IsShared   *bool   `json:"is_shared"`
	Nonce      string  `json:"nonce"`
	// Process is decoded apart: a malformed one is ignored, not a bad lock.
	Process json.RawMessage `json:"process"`
}

// encode returns the payload's JSON.
func (p payload) encode() []byte {
	data, err := json.Marshal(wireOut{
		Operation:  p.Operation,
		Holder:     p.Holder,
		AcquiredAt: p.AcquiredAt.UTC().Format(timeLayout),
		ExpiresAt:  p.ExpiresAt.UTC().Format(timeLayout),
		IsShared:   p.IsShared,
		Nonce:      p.Nonce,
		Process:    p.Process,
	})
	if err != nil {
		// Marshalling strings, numbers and a bool cannot fail.
		panic(fmt.Sprintf("lock: encoding payload: %v", err))
	}
	return data
}

// decodePayload parses a lock object. operation, holder, acquired_at and
// expires_at are required; is_shared is optional (other writers of the
// seed's layout omit it for exclusive locks: the key tells the kind, see
// decodeKind) and nonce is ours. Times may be in any RFC 3339 form Go
// parses (with or without a fraction, any offset); expires_at must not
// precede acquired_at. declaredShared is is_shared when present. Errors
// wrap ErrBadLock.
func decodePayload(data []byte) (p payload, declaredShared *bool, err error) {
	if len(data) == 0 {
		return payload{}, nil, fmt.Errorf("%w: empty object", ErrBadLock)
	}
	if len(data) > MaxPayload {
		return payload{}, nil, fmt.Errorf("%w: object is %d bytes, more than the %d a lock can be", ErrBadLock, len(data), MaxPayload)
	}
	var w wireIn
	if err := json.Unmarshal(data, &w); err != nil {
		return payload{}, nil, fmt.Errorf("%w: not JSON: %w", ErrBadLock, err)
	}
	if w.Operation == nil || w.Holder == nil || w.AcquiredAt == nil || w.ExpiresAt == nil {
		return payload{}, nil, fmt.Errorf("%w: missing field (want operation, holder, acquired_at, expires_at)", ErrBadLock)
	}
	if *w.Operation == "" || *w.Holder == "" {
		return payload{}, nil, fmt.Errorf("%w: empty operation or holder", ErrBadLock)
	}
	acquired, err1 := time.Parse(time.RFC3339Nano, *w.AcquiredAt)
	expires, err2 := time.Parse(time.RFC3339Nano, *w.ExpiresAt)
	if err := errors.Join(err1, err2); err != nil {
		return payload{}, nil, fmt.Errorf("%w: bad time: %w", ErrBadLock, err)
	}
	if expires.Before(acquired) {
		return payload{}, nil, fmt.Errorf("%w: expires_at %s before acquired_at %s", ErrBadLock, *w.ExpiresAt, *w.AcquiredAt)
	}
	return payload{
		Operation:  *w.Operation,
		Holder:     *w.Holder,
		AcquiredAt: acquired.UTC(),
		ExpiresAt:  expires.UTC(),
		IsShared:   w.IsShared != nil && *w.IsShared,
		Nonce:      w.Nonce,
		Process:    decodeProc(w.Process),
	}, w.IsShared, nil
}

// decodeKind decodes data found under a key of the given kind. The key
// decides the kind: is_shared may be missing, and only a present is_shared
// that contradicts the key makes the object a bad lock.
func decodeKind(data []byte, shared bool) (payload, error) {
	p, declared, err := decodePayload(data)
	if err != nil {
		return p, err
	}
	if declared != nil && *declared != shared {
		return p, fmt.Errorf("%w: is_shared is %t under a %s key", ErrBadLock, *declared, kindName(shared))
	}
	p.IsShared = shared
	return p, nil
}

func kindName(shared bool) string {
	if shared {
		return "shared"
	}
	return "exclusive"
}
