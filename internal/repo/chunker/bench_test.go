package chunker

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"testing"
)

// benchSize is the size of the benchmark buffer.
const benchSize = 64 << 20

// BenchmarkChunker measures streaming chunking of 64 MiB of random data
// with the default parameters, including the reads from a bytes.Reader.
func BenchmarkChunker(b *testing.B) {
	data := randomData(20, benchSize)
	c, err := New(bytes.NewReader(nil), NewGear(testKey()), DefaultParams())
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		c.Reset(bytes.NewReader(data))
		for {
			_, err := c.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkCut measures Cut alone over 64 MiB of random data, counting the
// bytes it skips below Min.
func BenchmarkCut(b *testing.B) {
	data := randomData(20, benchSize)
	g, p := NewGear(testKey()), DefaultParams()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		for off := 0; off < len(data); {
			off += Cut(data[off:], g, p)
		}
	}
}

// BenchmarkCutHashOnly measures the fingerprint loop over every byte: 64
// MiB of zeros with Min just below Avg, so that almost every byte is
// hashed, giving the raw rolling speed.
func BenchmarkCutHashOnly(b *testing.B) {
	data := make([]byte, benchSize)
	g, p := NewGear(testKey()), Params{Min: 64, Avg: 128, Max: 8 << 20}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		for off := 0; off < len(data); {
			off += Cut(data[off:], g, p)
		}
	}
}

// BenchmarkRefCut measures the byte-at-a-time reference rule, for
// comparison with Cut's two-bytes-at-a-time loop.
func BenchmarkRefCut(b *testing.B) {
	data := randomData(20, benchSize)
	g, p := NewGear(testKey()), DefaultParams()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		for off := 0; off < len(data); {
			off += refCut(data[off:], g, p)
		}
	}
}

// BenchmarkSHA256 hashes the same 64 MiB buffer, for comparison.
func BenchmarkSHA256(b *testing.B) {
	data := randomData(20, benchSize)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		sha256.Sum256(data)
	}
}
