package chunker

import (
	"bytes"
	"io"
	"slices"
	"testing"
	"testing/iotest"
)

// FuzzChunker chunks arbitrary data with small parameters and arbitrary
// keys, through short reads, and checks that the chunks concatenate to the
// input, respect the bounds and match the byte-at-a-time reference rule.
func FuzzChunker(f *testing.F) {
	f.Add([]byte("k"), []byte{}, uint8(0))
	f.Add([]byte("k"), randomData(30, 5000), uint8(1))
	f.Add([]byte("key"), make([]byte, 3000), uint8(2))
	f.Add([]byte{}, counterData("fuzz", 10000), uint8(3))
	p := smallParams()
	f.Fuzz(func(t *testing.T, key, data []byte, mode uint8) {
		g := NewGear(key)
		var r io.Reader = bytes.NewReader(data)
		switch mode % 4 {
		case 1:
			r = iotest.OneByteReader(r)
		case 2:
			r = iotest.HalfReader(r)
		case 3:
			r = iotest.DataErrReader(r)
		}
		chunks := chunkAll(t, r, g, p)
		checkChunks(t, data, chunks, p)
		if got, want := lengths(chunks), refLengths(data, g, p); !slices.Equal(got, want) {
			t.Fatalf("chunk lengths %v, reference %v", got, want)
		}
	})
}

// FuzzCut checks Cut against the reference rule on arbitrary data and
// arbitrary valid parameters.
func FuzzCut(f *testing.F) {
	f.Add([]byte("k"), randomData(31, 3000), uint16(64), uint8(8), uint16(2000))
	f.Add([]byte("k"), make([]byte, 3000), uint16(100), uint8(7), uint16(129))
	f.Fuzz(func(t *testing.T, key, data []byte, minSize uint16, avgBits uint8, maxSize uint16) {
		p := Params{Min: int(minSize), Avg: 1 << (avgBits % 16), Max: int(maxSize)}
		if p.Validate() != nil {
			return
		}
		g := NewGear(key)
		got, want := Cut(data, g, p), refCut(data, g, p)
		if got != want {
			t.Fatalf("Cut = %d, reference %d (len %d, %+v)", got, want, len(data), p)
		}
	})
}
