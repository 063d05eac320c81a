package chunker

import (
	"errors"
	"fmt"
	"math/bits"
)

// ErrInvalidParams is returned (wrapped) for chunk size parameters that
// Params.Validate rejects, and by New for a nil gear table.
var ErrInvalidParams = errors.New("chunker: invalid parameters")

const (
	// minMin is the smallest allowed Min: one fingerprint window.
	minMin = 64
	// maxMax is the largest allowed Max, so that the 2*Max buffer fits
	// comfortably in memory and in an int.
	maxMax = 1 << 30
)

// Params are the chunk size limits in bytes. Every chunk except the last of
// a stream is between Min and Max bytes long. Avg is the normalization
// point, not the exact mean: on random data the mean chunk is about
// 1.15*Avg with Min = Avg/2 (as in DefaultParams) and 1.1*Avg with
// Min = Avg/4, since past Avg a cut comes on average Avg/4 bytes later.
type Params struct{ Min, Avg, Max int }

// DefaultParams returns the repository's parameters: minimum 512 KiB,
// average 1 MiB, maximum 8 MiB.
func DefaultParams() Params {
	return Params{Min: 512 << 10, Avg: 1 << 20, Max: 8 << 20}
}

// Validate reports whether p is usable: 64 <= Min < Avg < Max <= 1 GiB and
// Avg is a power of two.
func (p Params) Validate() error {
	switch {
	case p.Min < minMin:
		return fmt.Errorf("%w: Min %d is below %d", ErrInvalidParams, p.Min, minMin)
	case p.Max > maxMax:
		return fmt.Errorf("%w: Max %d is above %d", ErrInvalidParams, p.Max, maxMax)
	case !(p.Min < p.Avg && p.Avg < p.Max):
		return fmt.Errorf("%w: need Min < Avg < Max, have %d, %d, %d", ErrInvalidParams, p.Min, p.Avg, p.Max)
	case bits.OnesCount(uint(p.Avg)) != 1:
		return fmt.Errorf("%w: Avg %d is not a power of two", ErrInvalidParams, p.Avg)
	}
	return nil
}

// masks returns the strict mask used before Avg and the loose mask used
// after it (normalization level 2), both with bit 63 clear.
func masks(avg int) (strict, loose uint64) {
	b := bits.Len(uint(avg)) - 1 // log2(Avg)
	return mask(b + 2), mask(b - 2)
}

// mask returns k one bits at positions 63-k through 62.
func mask(k int) uint64 {
	return (uint64(1)<<k - 1) << (63 - k)
}
