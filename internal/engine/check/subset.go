package check

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/cloudstic/cloudstic/internal/repo/id"
)

// ErrBadSubset means a -read-data-subset value could not be parsed.
var ErrBadSubset = errors.New("invalid subset: want N/M (e.g. 1/10) or a percentage (e.g. 10%)")

// Subset picks which packs -read-data reads. The zero value selects all.
type Subset struct {
	// Part and Of: the Part-th of Of disjoint groups (by pack id), 1-based;
	// reading 1/M .. M/M covers every pack once.
	Part, Of int
	// Percent: a random sample of about this share of packs.
	Percent float64
}

// ParseSubset parses "N/M" or "P%". The empty string selects all.
func ParseSubset(s string) (Subset, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Subset{}, nil
	}
	if p, ok := strings.CutSuffix(s, "%"); ok {
		f, err := strconv.ParseFloat(p, 64)
		if err != nil || f <= 0 || f > 100 {
			return Subset{}, fmt.Errorf("%w: %q", ErrBadSubset, s)
		}
		return Subset{Percent: f}, nil
	}
	a, b, ok := strings.Cut(s, "/")
	n, err1 := strconv.Atoi(a)
	m, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || m < 1 || n < 1 || n > m {
		return Subset{}, fmt.Errorf("%w: %q", ErrBadSubset, s)
	}
	return Subset{Part: n, Of: m}, nil
}

// Selects reports whether the pack is read.
func (s Subset) Selects(p id.ID) bool {
	switch {
	case s.Of > 0:
		return int(binary.BigEndian.Uint32(p[:4])%uint32(s.Of)) == s.Part-1
	case s.Percent > 0:
		return rand.Float64()*100 < s.Percent
	}
	return true
}
