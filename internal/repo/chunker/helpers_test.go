package chunker

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
)

// testKey returns the gear key used by most tests.
func testKey() []byte { return []byte("cloudstic chunker test key, 32 b") }

// smallParams are tiny parameters that give many chunks on little data.
func smallParams() Params { return Params{Min: 64, Avg: 256, Max: 1024} }

// randomData returns n pseudo-random bytes from a seeded ChaCha8.
func randomData(seed byte, n int) []byte {
	var s [32]byte
	s[0] = seed
	b := make([]byte, n)
	_, _ = rand.NewChaCha8(s).Read(b) // ChaCha8.Read never fails
	return b
}

// counterData returns n bytes of SHA-256 in counter mode:
// SHA-256(label || uint64be(i)) for i = 0, 1, ... It is easy to reproduce
// outside Go, for the golden tests.
func counterData(label string, n int) []byte {
	out := make([]byte, 0, n+sha256.Size)
	msg := append([]byte(label), make([]byte, 8)...)
	for i := uint64(0); len(out) < n; i++ {
		binary.BigEndian.PutUint64(msg[len(label):], i)
		sum := sha256.Sum256(msg)
		out = append(out, sum[:]...)
	}
	return out[:n]
}

// refCut is the byte-at-a-time statement of the cut rule in the package
// documentation, the oracle for Cut.
func refCut(data []byte, g *Gear, p Params) int {
	n := len(data)
	if n <= p.Min {
		return n
	}
	n = min(n, p.Max)
	normal := min(p.Avg, n)
	strict, loose := masks(p.Avg)
	var fp uint64
	for i := p.Min; i < n; i++ {
		fp = fp<<1 + g.table[data[i]]
		m := loose
		if i < normal {
			m = strict
		}
		if fp&m == 0 {
			return i + 1
		}
	}
	return n
}

// refLengths splits data by applying refCut repeatedly and returns the chunk
// lengths.
func refLengths(data []byte, g *Gear, p Params) []int {
	var lens []int
	for off := 0; off < len(data); {
		n := refCut(data[off:], g, p)
		lens = append(lens, n)
		off += n
	}
	return lens
}

// chunkAll reads every chunk from r, copying each, and fails the test on
// any error other than the final io.EOF.
func chunkAll(t testing.TB, r io.Reader, g *Gear, p Params) [][]byte {
	t.Helper()
	c, err := New(r, g, p)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return drain(t, c)
}

// drain reads every chunk from c, copying each.
func drain(t testing.TB, c *Chunker) [][]byte {
	t.Helper()
	var chunks [][]byte
	for {
		b, err := c.Next()
		if errors.Is(err, io.EOF) {
			return chunks
		}
		if err != nil {
			t.Fatalf("Next after %d chunks: %v", len(chunks), err)
		}
		chunks = append(chunks, bytes.Clone(b))
	}
}

// lengths returns the length of each chunk.
func lengths(chunks [][]byte) []int {
	lens := make([]int, len(chunks))
	for i, c := range chunks {
		lens[i] = len(c)
	}
	return lens
}

// checkChunks fails the test unless chunks concatenate to data and every
// chunk but the last is within [p.Min, p.Max] (the last within [1, p.Max]).
func checkChunks(t testing.TB, data []byte, chunks [][]byte, p Params) {
	t.Helper()
	if got := bytes.Join(chunks, nil); !bytes.Equal(got, data) {
		t.Fatalf("concatenation of %d chunks (%d bytes) differs from the %d-byte input", len(chunks), len(got), len(data))
	}
	for i, c := range chunks {
		lo := p.Min
		if i == len(chunks)-1 {
			lo = 1
		}
		if len(c) < lo || len(c) > p.Max {
			t.Fatalf("chunk %d of %d has %d bytes, want [%d, %d]", i, len(chunks), len(c), lo, p.Max)
		}
	}
}

// chunkSet returns the set of SHA-256 sums of the chunks.
func chunkSet(chunks [][]byte) map[[32]byte]bool {
	set := make(map[[32]byte]bool, len(chunks))
	for _, c := range chunks {
		set[sha256.Sum256(c)] = true
	}
	return set
}

// sha256Sum returns the SHA-256 of b.
func sha256Sum(b []byte) [32]byte { return sha256.Sum256(b) }
