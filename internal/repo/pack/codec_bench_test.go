package pack

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	mrand "math/rand/v2"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/cloudstic/cloudstic/internal/repo/crypt"
)

// Benchmarks of the per-byte work of a backup (hash, compress, seal) and of
// the primitives under it, so that scripts/bench.sh can show the machine's
// ceiling next to cloudstic's throughput. Run with -cpu 1 for one core.

const benchBlob = 1 << 20

func benchData(b *testing.B, compressible bool) []byte {
	b.Helper()
	if compressible {
		return logText(benchBlob)
	}
	data := make([]byte, benchBlob)
	if _, err := rand.Read(data); err != nil {
		b.Fatal(err)
	}
	return data
}

// logText returns n bytes of log lines like those of bench/gen.py: eight
// words drawn from sixteen and a number per line. (A repeated phrase, used
// before, compressed forty times faster than such text.)
func logText(n int) []byte {
	words := []string{"backup", "restore", "snapshot", "chunk", "pack", "index", "tree", "blob",
		"error", "ok", "latency", "bytes", "request", "store", "lock", "prune"}
	rng := mrand.New(mrand.NewPCG(1, 2))
	out := make([]byte, 0, n+200)
	for line := 1; len(out) < n; line++ {
		out = fmt.Appendf(out, "2026-01-01T00:00:%02d line %d ", line%60, line)
		for w := range 8 {
			if w > 0 {
				out = append(out, ' ')
			}
			out = append(out, words[rng.IntN(len(words))]...)
		}
		out = fmt.Appendf(out, " value=%d\n", rng.IntN(100000))
	}
	return out[:n]
}

func benchKey(b *testing.B) *crypt.Key {
	b.Helper()
	master, err := crypt.NewMaster()
	if err != nil {
		b.Fatal(err)
	}
	k, err := crypt.FromMaster(master)
	if err != nil {
		b.Fatal(err)
	}
	return k
}

func BenchmarkSHA256(b *testing.B) {
	data := benchData(b, false)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		sha256.Sum256(data)
	}
}

func BenchmarkBlobID(b *testing.B) { // HMAC-SHA256, the chunk id
	k := benchKey(b)
	data := benchData(b, false)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		k.ID(data)
	}
}

func BenchmarkAES256GCM(b *testing.B) {
	key := make([]byte, 32)
	block, err := aes.NewCipher(key)
	if err != nil {
		b.Fatal(err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		b.Fatal(err)
	}
	data := benchData(b, false)
	out := make([]byte, 0, len(data)+aead.Overhead())
	nonce := make([]byte, aead.NonceSize())
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		out = aead.Seal(out[:0], nonce, data, nil)
	}
}

func BenchmarkZstdFastest(b *testing.B) {
	for _, tc := range []struct {
		name         string
		compressible bool
	}{{"random", false}, {"text", true}} {
		b.Run(tc.name, func(b *testing.B) {
			// The codec's settings, on one goroutine.
			enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
				zstd.WithLowerEncoderMem(true), zstd.WithEncoderCRC(false), zstd.WithWindowSize(1<<20))
			if err != nil {
				b.Fatal(err)
			}
			data := benchData(b, tc.compressible)
			var out []byte
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				out = enc.EncodeAll(data, out[:0])
			}
		})
	}
}

func BenchmarkCodec(b *testing.B) {
	for _, tc := range []struct {
		name         string
		compressible bool
	}{{"random", false}, {"text", true}} {
		c, err := NewCodec(benchKey(b))
		if err != nil {
			b.Fatal(err)
		}
		data := benchData(b, tc.compressible)
		blobID := c.Key().ID(data)
		b.Run("encode/"+tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := c.Encode(data); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("decode/"+tc.name, func(b *testing.B) {
			sealed, err := c.Encode(data)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				got, err := c.Decode(sealed, blobID)
				if err != nil || !bytes.Equal(got, data) {
					b.Fatal("decode mismatch", err)
				}
			}
		})
	}
}
