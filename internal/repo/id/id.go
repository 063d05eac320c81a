// Package id defines the 32-byte identifiers of blobs, packs, index files
// and snapshots, printed as 64 lowercase hex digits.
package id

import (
	"encoding/hex"
	"errors"
	"fmt"
)

// ID names a blob, pack, index file or snapshot. For blobs it is a keyed
// hash of the plaintext; for other objects a hash of what was stored.
type ID [32]byte

// ErrInvalid is returned for text that is not 64 hex digits.
var ErrInvalid = errors.New("invalid id")

// String returns the id as 64 hex digits.
func (i ID) String() string { return hex.EncodeToString(i[:]) }

// Short returns the first 8 hex digits, for display.
func (i ID) Short() string { return hex.EncodeToString(i[:4]) }

// IsZero reports whether i is the zero id (meaning "none").
func (i ID) IsZero() bool { return i == ID{} }

// Parse decodes 64 hex digits.
func Parse(s string) (ID, error) { return parse([]byte(s)) }

// parse is Parse of text as bytes: UnmarshalText decodes an id without
// copying it into a string first (tree decoding parses millions).
func parse(b []byte) (ID, error) {
	var i ID
	if len(b) != 64 {
		return i, fmt.Errorf("%w: %q is not 64 hex digits", ErrInvalid, b)
	}
	if _, err := hex.Decode(i[:], b); err != nil {
		return i, fmt.Errorf("%w: %q: %v", ErrInvalid, b, err)
	}
	return i, nil
}

// MarshalText encodes the id as hex (for JSON).
func (i ID) MarshalText() ([]byte, error) { return []byte(i.String()), nil }

// UnmarshalText decodes hex (for JSON).
func (i *ID) UnmarshalText(b []byte) error {
	v, err := parse(b)
	if err != nil {
		return err
	}
	*i = v
	return nil
}
