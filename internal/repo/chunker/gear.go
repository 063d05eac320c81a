package chunker

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
)

// gearLabel is the HMAC message prefix of every gear table entry. It is part
// of the repository format.
const gearLabel = "cloudstic gear"

// Gear is a keyed gear table: 256 pseudo-random 64-bit values, one per byte
// value. It is immutable after NewGear and safe for concurrent use.
type Gear struct {
	table [256]uint64
	// shifted holds table[i]<<1, for the two-bytes-at-a-time loop.
	shifted [256]uint64
}

// NewGear derives the gear table from a secret key: entry i is the
// big-endian uint64 of the first 8 bytes of
// HMAC-SHA256(key, "cloudstic gear" || byte(i)). The derivation is part of
// the repository format. The key should be a secret of at least 32 bytes
// derived from the repository's master key and used for nothing else.
func NewGear(key []byte) *Gear {
	g := &Gear{}
	mac := hmac.New(sha256.New, key)
	msg := make([]byte, len(gearLabel)+1)
	copy(msg, gearLabel)
	var sum [sha256.Size]byte
	for i := range g.table {
		mac.Reset()
		msg[len(gearLabel)] = byte(i)
		mac.Write(msg) // hash.Hash.Write never returns an error
		v := binary.BigEndian.Uint64(mac.Sum(sum[:0]))
		g.table[i] = v
		g.shifted[i] = v << 1
	}
	return g
}
