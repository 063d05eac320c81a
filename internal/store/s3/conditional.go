package s3

import (
	"errors"
	"fmt"

	"github.com/cloudstic/cloudstic/internal/store"
)

// ConditionalWrites says which conditional writes the store may declare.
// Some S3-compatible servers accept If-None-Match and If-Match without
// honouring them under concurrency, which a probe by one client cannot see:
// the user can then declare fewer capabilities than the probe finds, never
// more.
type ConditionalWrites int

const (
	// ConditionalAuto declares what the probe finds (the default).
	ConditionalAuto ConditionalWrites = iota
	// ConditionalCreateOnly declares create-if-absent (when the probe finds
	// it) but never compare-and-swap.
	ConditionalCreateOnly
	// ConditionalNone declares neither; the probe is skipped.
	ConditionalNone
)

// ErrBadConditionalWrites is returned by ParseConditionalWrites.
var ErrBadConditionalWrites = errors.New("want auto, create-only or none")

// ParseConditionalWrites parses "auto", "create-only" or "none" ("" is auto).
func ParseConditionalWrites(s string) (ConditionalWrites, error) {
	switch s {
	case "", "auto":
		return ConditionalAuto, nil
	case "create-only":
		return ConditionalCreateOnly, nil
	case "none":
		return ConditionalNone, nil
	}
	return 0, fmt.Errorf("%q: %w", s, ErrBadConditionalWrites)
}

// String returns the setting as ParseConditionalWrites reads it.
func (c ConditionalWrites) String() string {
	switch c {
	case ConditionalCreateOnly:
		return "create-only"
	case ConditionalNone:
		return "none"
	}
	return "auto"
}

// limit returns the capabilities of probed that c allows.
func (c ConditionalWrites) limit(probed store.Capabilities) store.Capabilities {
	switch c {
	case ConditionalCreateOnly:
		return store.Capabilities{CreateIfAbsent: probed.CreateIfAbsent}
	case ConditionalNone:
		return store.Capabilities{}
	}
	return probed
}
