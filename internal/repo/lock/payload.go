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

// maxPayload bounds a lock object; anything larger is not a lock we wrote.
const maxPayload = 64 << 10

// payload is the content of one lock object.
type payload struct {
	Operation  string
	Holder     string
	AcquiredAt time.Time
	ExpiresAt  time.Time
	IsShared   bool
}

// wireOut is the JSON form written to the store (field order as the seed).
type wireOut struct {
	Operation  string `json:"operation"`
	Holder     string `json:"holder"`
	AcquiredAt string `json:"acquired_at"`
	ExpiresAt  string `json:"expires_at"`
	IsShared   bool   `json:"is_shared"`
}

// wireIn is the JSON form read back; pointers tell missing fields apart.
type wireIn struct {
	Operation  *string `json:"operation"`
	Holder     *string `json:"holder"`
	AcquiredAt *string `json:"acquired_at"`
	ExpiresAt  *string `json:"expires_at"`
	IsShared   *bool   `json:"is_shared"`
}

// encode returns the payload's JSON.
func (p payload) encode() []byte {
	data, err := json.Marshal(wireOut{
		Operation:  p.Operation,
		Holder:     p.Holder,
		AcquiredAt: p.AcquiredAt.UTC().Format(timeLayout),
		ExpiresAt:  p.ExpiresAt.UTC().Format(timeLayout),
		IsShared:   p.IsShared,
	})
	if err != nil {
		// Marshalling strings and a bool cannot fail.
		panic(fmt.Sprintf("lock: encoding payload: %v", err))
	}
	return data
}

// decodePayload parses a lock object. Every field is required; times must be
// RFC 3339 and expires_at must not precede acquired_at. Errors wrap ErrBadLock.
func decodePayload(data []byte) (payload, error) {
	if len(data) == 0 {
		return payload{}, fmt.Errorf("%w: empty object", ErrBadLock)
	}
	if len(data) > maxPayload {
		return payload{}, fmt.Errorf("%w: object is %d bytes, more than the %d a lock can be", ErrBadLock, len(data), maxPayload)
	}
	var w wireIn
	if err := json.Unmarshal(data, &w); err != nil {
		return payload{}, fmt.Errorf("%w: not JSON: %w", ErrBadLock, err)
	}
	if w.Operation == nil || w.Holder == nil || w.AcquiredAt == nil || w.ExpiresAt == nil || w.IsShared == nil {
		return payload{}, fmt.Errorf("%w: missing field (want operation, holder, acquired_at, expires_at, is_shared)", ErrBadLock)
	}
	if *w.Operation == "" || *w.Holder == "" {
		return payload{}, fmt.Errorf("%w: empty operation or holder", ErrBadLock)
	}
	acquired, err1 := time.Parse(time.RFC3339Nano, *w.AcquiredAt)
	expires, err2 := time.Parse(time.RFC3339Nano, *w.ExpiresAt)
	if err := errors.Join(err1, err2); err != nil {
		return payload{}, fmt.Errorf("%w: bad time: %w", ErrBadLock, err)
	}
	if expires.Before(acquired) {
		return payload{}, fmt.Errorf("%w: expires_at %s before acquired_at %s", ErrBadLock, *w.ExpiresAt, *w.AcquiredAt)
	}
	return payload{
		Operation:  *w.Operation,
		Holder:     *w.Holder,
		AcquiredAt: acquired.UTC(),
		ExpiresAt:  expires.UTC(),
		IsShared:   *w.IsShared,
	}, nil
}

// decodeKind decodes data found under a key of the given kind; a shared
// payload under the exclusive key (or the reverse) is a bad lock.
func decodeKind(data []byte, shared bool) (payload, error) {
	p, err := decodePayload(data)
	if err != nil {
		return p, err
	}
	if p.IsShared != shared {
		return p, fmt.Errorf("%w: is_shared is %t under a %s key", ErrBadLock, p.IsShared, kindName(shared))
	}
	return p, nil
}

func kindName(shared bool) string {
	if shared {
		return "shared"
	}
	return "exclusive"
}
