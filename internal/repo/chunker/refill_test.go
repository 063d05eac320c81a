package chunker

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// TestChunksValidUntilRefill keeps every chunk Next returned since the last
// refill and checks, after each call, that none was overwritten: WillRefill
// is what lets the backup hand chunks to other goroutines without a copy.
// It also checks that refills do happen, so the test cannot pass vacuously.
func TestChunksValidUntilRefill(t *testing.T) {
	g := NewGear(testKey())
	tests := []struct {
		name   string
		reader func([]byte) io.Reader
	}{
		{"whole reads", func(b []byte) io.Reader { return bytes.NewReader(b) }},
		{"one byte reads", func(b []byte) io.Reader { return iotest.OneByteReader(bytes.NewReader(b)) }},
		{"half reads", func(b []byte) io.Reader { return iotest.HalfReader(bytes.NewReader(b)) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := randomData(7, 40*smallParams().Max+123)
			c, err := New(tc.reader(data), g, smallParams())
			if err != nil {
				t.Fatal(err)
			}
			var live, copies [][]byte
			var all []byte
			refills := 0
			for {
				if c.WillRefill() {
					live, copies = nil, nil
					refills++
				}
				chunk, err := c.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				all = append(all, chunk...)
				live = append(live, chunk)
				copies = append(copies, bytes.Clone(chunk))
				for i := range live {
					if !bytes.Equal(live[i], copies[i]) {
						t.Fatalf("chunk %d of this buffer fill was overwritten before WillRefill said so", i)
					}
				}
			}
			if !bytes.Equal(all, data) {
				t.Fatal("chunks do not add up to the input")
			}
			if refills < 10 {
				t.Fatalf("only %d refills over %d bytes", refills, len(data))
			}
		})
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestRefillReadsLittle: the call of Next that moves the buffer (the one a
// caller waits for every chunk before) reads only what it needs to cut the
// next chunk and a quarter of Max more, not the whole buffer; the rest is
// read by later calls, into the room after the chunks returned, while
// those are still being used. Chunks must come out as from a reader of the
// same bytes that returns them all at once.
func TestRefillReadsLittle(t *testing.T) {
	g := NewGear(testKey())
	tests := []struct {
		name   string
		p      Params
		reader func([]byte) io.Reader
	}{
		{"whole reads", smallParams(), func(b []byte) io.Reader { return bytes.NewReader(b) }},
		{"half reads", smallParams(), func(b []byte) io.Reader { return iotest.HalfReader(bytes.NewReader(b)) }},
		{"one byte reads", smallParams(), func(b []byte) io.Reader { return iotest.OneByteReader(bytes.NewReader(b)) }},
		{"defaults", DefaultParams(), func(b []byte) io.Reader { return bytes.NewReader(b) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := randomData(9, 12*tc.p.Max+77)
			cr := &countingReader{r: tc.reader(data)}
			c, err := New(cr, g, tc.p)
			if err != nil {
				t.Fatal(err)
			}
			want := allChunks(t, bytes.NewReader(data), g, tc.p)
			refills := 0
			for i := 0; ; i++ {
				moving, before := c.WillRefill(), cr.n
				chunk, err := c.Next()
				if errors.Is(err, io.EOF) {
					if i != len(want) {
						t.Fatalf("%d chunks, want %d", i, len(want))
					}
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if i >= len(want) || !bytes.Equal(chunk, want[i]) {
					t.Fatalf("chunk %d differs from a whole read's", i)
				}
				if moving {
					refills++
					if read := cr.n - before; read > tc.p.Max+tc.p.Max/4 {
						t.Fatalf("a refill read %d bytes, want at most %d", read, tc.p.Max+tc.p.Max/4)
					}
				}
			}
			if refills < 5 {
				t.Fatalf("only %d refills over %d bytes", refills, len(data))
			}
		})
	}
}

// allChunks returns copies of every chunk of r.
func allChunks(t *testing.T, r io.Reader, g *Gear, p Params) [][]byte {
	t.Helper()
	c, err := New(r, g, p)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for {
		chunk, err := c.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, bytes.Clone(chunk))
	}
}

// TestContinue cuts several streams one after the other with Continue:
// each stream's chunks must be those a new chunker cuts, and every chunk
// returned since the last refill, of this stream or of one before, must
// stay intact (the backup reads the next file while the last one's chunks
// are still being saved).
func TestContinue(t *testing.T) {
	g := NewGear(testKey())
	p := smallParams()
	tests := []struct {
		name  string
		sizes []int
	}{
		{"small streams", []int{100, 3 * p.Min, 1, p.Max + 5, 7 * p.Min, 2*p.Max - 1, 900}},
		{"large streams", []int{9 * p.Max, 5*p.Max + 3, 11 * p.Max}},
		{"empty streams between", []int{3 * p.Max, 0, 0, 500, 0, 4 * p.Max}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var live, copies [][]byte
			var c *Chunker
			refills := 0
			for i, n := range tc.sizes {
				data := randomData(byte(20+i), n)
				if c == nil {
					var err error
					if c, err = New(iotest.HalfReader(bytes.NewReader(data)), g, p); err != nil {
						t.Fatal(err)
					}
				} else {
					c.Continue(iotest.HalfReader(bytes.NewReader(data)))
				}
				want := allChunks(t, bytes.NewReader(data), g, p)
				for j := 0; ; j++ {
					if c.WillRefill() {
						live, copies = nil, nil
						refills++
					}
					chunk, err := c.Next()
					if errors.Is(err, io.EOF) {
						if j != len(want) {
							t.Fatalf("stream %d: %d chunks, want %d", i, j, len(want))
						}
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					if j >= len(want) || !bytes.Equal(chunk, want[j]) {
						t.Fatalf("stream %d: chunk %d differs from a new chunker's", i, j)
					}
					live = append(live, chunk)
					copies = append(copies, bytes.Clone(chunk))
					for k := range live {
						if !bytes.Equal(live[k], copies[k]) {
							t.Fatalf("stream %d: a chunk was overwritten before WillRefill said so", i)
						}
					}
				}
			}
			if refills == 0 {
				t.Fatal("no refill: the test checks nothing")
			}
		})
	}
}
