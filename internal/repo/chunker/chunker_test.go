package chunker

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"
	"testing/iotest"
)

func TestParamsValidate(t *testing.T) {
	tests := []struct {
		name string
		p    Params
		ok   bool
	}{
		{"default", DefaultParams(), true},
		{"small", smallParams(), true},
		{"smallest", Params{Min: 64, Avg: 128, Max: 129}, true},
		{"largest", Params{Min: 1 << 28, Avg: 1 << 29, Max: 1 << 30}, true},
		{"zero", Params{}, false},
		{"min below 64", Params{Min: 63, Avg: 256, Max: 1024}, false},
		{"min equals avg", Params{Min: 256, Avg: 256, Max: 1024}, false},
		{"avg equals max", Params{Min: 64, Avg: 1024, Max: 1024}, false},
		{"min above avg", Params{Min: 512, Avg: 256, Max: 1024}, false},
		{"avg not power of two", Params{Min: 64, Avg: 300, Max: 1024}, false},
		{"max too large", Params{Min: 1 << 20, Avg: 1 << 21, Max: 1<<30 + 1}, false},
		{"negative", Params{Min: -1, Avg: 256, Max: 1024}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.Validate()
			if tt.ok && err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if !tt.ok && !errors.Is(err, ErrInvalidParams) {
				t.Fatalf("Validate = %v, want ErrInvalidParams", err)
			}
			_, err = New(bytes.NewReader(nil), NewGear(testKey()), tt.p)
			if tt.ok != (err == nil) {
				t.Fatalf("New error = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

func TestNewNilGear(t *testing.T) {
	if _, err := New(bytes.NewReader(nil), nil, DefaultParams()); !errors.Is(err, ErrInvalidParams) {
		t.Fatalf("New(nil gear) = %v, want ErrInvalidParams", err)
	}
}

// TestRoundTrip checks, for many sizes and short-reading readers, that the
// chunks concatenate to the input, respect the bounds and are exactly the
// chunks of the reference rule applied to the whole input.
func TestRoundTrip(t *testing.T) {
	g := NewGear(testKey())
	big := randomData(1, 50<<20)
	zeros := make([]byte, 64<<10)
	type size struct {
		name string
		data []byte
	}
	sizes := func(p Params, large []byte) []size {
		return []size{
			{"0", nil}, {"1", big[:1]}, {"min-1", big[:p.Min-1]}, {"min", big[:p.Min]},
			{"min+1", big[:p.Min+1]}, {"avg", big[:p.Avg]}, {"max", big[:p.Max]},
			{"max+1", big[:p.Max+1]}, {"2max+12345", big[:2*p.Max+12345]},
			{"large", large}, {"zeros", zeros},
		}
	}
	readers := []struct {
		name string
		wrap func(io.Reader) io.Reader
	}{
		{"full", func(r io.Reader) io.Reader { return r }},
		{"onebyte", iotest.OneByteReader},
		{"half", iotest.HalfReader},
		{"dataerr", iotest.DataErrReader},
	}
	params := []struct {
		name    string
		p       Params
		large   []byte
		maxByte int // largest input for one-byte reads, to keep the test quick
	}{
		{"default", DefaultParams(), big, DefaultParams().Max + 1},
		{"small", smallParams(), big[:100<<10], 1 << 30},
	}
	for _, pp := range params {
		for _, sz := range sizes(pp.p, pp.large) {
			want := refLengths(sz.data, g, pp.p)
			for _, rd := range readers {
				if rd.name == "onebyte" && len(sz.data) > pp.maxByte {
					continue
				}
				t.Run(pp.name+"/"+sz.name+"/"+rd.name, func(t *testing.T) {
					chunks := chunkAll(t, rd.wrap(bytes.NewReader(sz.data)), g, pp.p)
					checkChunks(t, sz.data, chunks, pp.p)
					if got := lengths(chunks); !slices.Equal(got, want) {
						t.Fatalf("chunk lengths %v, reference %v", got, want)
					}
				})
			}
		}
	}
}

func TestZerosCutAtMax(t *testing.T) {
	p := DefaultParams()
	data := make([]byte, 20<<20)
	chunks := chunkAll(t, bytes.NewReader(data), NewGear(testKey()), p)
	checkChunks(t, data, chunks, p)
	for i, c := range chunks[:len(chunks)-1] {
		if len(c) != p.Max {
			t.Fatalf("chunk %d has %d bytes, want Max %d", i, len(c), p.Max)
		}
	}
	if want := len(data) % p.Max; len(chunks[len(chunks)-1]) != want {
		t.Fatalf("last chunk has %d bytes, want %d", len(chunks[len(chunks)-1]), want)
	}
}

func TestDeterministic(t *testing.T) {
	data := randomData(2, 16<<20)
	a := chunkAll(t, bytes.NewReader(data), NewGear(testKey()), DefaultParams())
	b := chunkAll(t, iotest.HalfReader(bytes.NewReader(data)), NewGear(testKey()), DefaultParams())
	if !slices.Equal(lengths(a), lengths(b)) {
		t.Fatalf("two runs differ: %v vs %v", lengths(a), lengths(b))
	}
}

func TestKeysGiveDifferentBoundaries(t *testing.T) {
	tests := []struct {
		name string
		p    Params
		size int
	}{
		{"default", DefaultParams(), 32 << 20},
		{"small", smallParams(), 256 << 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := randomData(3, tt.size)
			a := lengths(chunkAll(t, bytes.NewReader(data), NewGear([]byte("key one")), tt.p))
			b := lengths(chunkAll(t, bytes.NewReader(data), NewGear([]byte("key two")), tt.p))
			if len(a) < 10 {
				t.Fatalf("only %d chunks, test data too small", len(a))
			}
			if slices.Equal(a, b) {
				t.Fatalf("different keys gave the same %d boundaries", len(a))
			}
		})
	}
}

// TestShiftResistance inserts 100 bytes near the start of a buffer and
// checks that most chunks are unchanged.
func TestShiftResistance(t *testing.T) {
	tests := []struct {
		name string
		p    Params
		size int
	}{
		{"default", DefaultParams(), 64 << 20},
		{"small", smallParams(), 1 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewGear(testKey())
			orig := randomData(4, tt.size)
			const at = 1000
			edited := slices.Concat(orig[:at], randomData(5, 100), orig[at:])
			before := chunkSet(chunkAll(t, bytes.NewReader(orig), g, tt.p))
			after := chunkAll(t, bytes.NewReader(edited), g, tt.p)
			shared := 0
			for _, c := range after {
				if before[sha256Sum(c)] {
					shared++
				}
			}
			pct := 100 * shared / len(after)
			t.Logf("%d of %d chunks (%d%%) survive the insertion", shared, len(after), pct)
			if pct < 80 {
				t.Fatalf("only %d of %d chunks (%d%%) survive the insertion, want >= 80%%", shared, len(after), pct)
			}
		})
	}
}

func TestAverageChunkSize(t *testing.T) {
	tests := []struct {
		name string
		p    Params
		size int
	}{
		{"default", DefaultParams(), 64 << 20},
		{"small", smallParams(), 4 << 20},
		{"quarter min", Params{Min: 64 << 10, Avg: 256 << 10, Max: 1 << 20}, 64 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := randomData(6, tt.size)
			lens := refLengths(data, NewGear(testKey()), tt.p)
			mean := float64(len(data)) / float64(len(lens))
			t.Logf("%d chunks, mean %.0f bytes = %.3f x Avg", len(lens), mean, mean/float64(tt.p.Avg))
			if mean < 0.75*float64(tt.p.Avg) || mean > 1.25*float64(tt.p.Avg) {
				t.Fatalf("mean chunk size %.0f is not within 25%% of Avg %d", mean, tt.p.Avg)
			}
		})
	}
}

func TestReset(t *testing.T) {
	p := smallParams()
	g := NewGear(testKey())
	inputs := [][]byte{randomData(7, 100<<10), nil, randomData(8, 10), randomData(9, 5000)}
	c, err := New(bytes.NewReader(nil), g, p)
	if err != nil {
		t.Fatal(err)
	}
	drain(t, c)
	for i, data := range inputs {
		c.Reset(bytes.NewReader(data))
		got := drain(t, c)
		checkChunks(t, data, got, p)
		if want := refLengths(data, g, p); !slices.Equal(lengths(got), want) {
			t.Fatalf("input %d: lengths %v, want %v", i, lengths(got), want)
		}
	}
}

// errAfter returns its data and then err.
type errAfter struct {
	r   io.Reader
	err error
}

func (e *errAfter) Read(b []byte) (int, error) {
	n, err := e.r.Read(b)
	if errors.Is(err, io.EOF) {
		return n, e.err
	}
	return n, err
}

// emptyReader returns (0, nil) forever.
type emptyReader struct{}

func (emptyReader) Read([]byte) (int, error) { return 0, nil }

func TestReaderError(t *testing.T) {
	errBoom := errors.New("boom")
	p := smallParams()
	tests := []struct {
		name string
		r    io.Reader
		want error
	}{
		{"immediate", iotest.ErrReader(errBoom), errBoom},
		{"after data", &errAfter{bytes.NewReader(randomData(10, 10<<10)), errBoom}, errBoom},
		{"after data, short reads", &errAfter{iotest.HalfReader(bytes.NewReader(randomData(10, 10<<10))), errBoom}, errBoom},
		{"timeout", iotest.TimeoutReader(bytes.NewReader(randomData(11, 10<<10))), iotest.ErrTimeout},
		{"no progress", emptyReader{}, io.ErrNoProgress},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.r, NewGear(testKey()), p)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; ; i++ {
				_, err = c.Next()
				if err != nil {
					break
				}
				if i > 1000 {
					t.Fatal("no error after 1000 chunks")
				}
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("Next = %v, want %v", err, tt.want)
			}
			if _, again := c.Next(); !errors.Is(again, tt.want) {
				t.Fatalf("second Next = %v, want the same error", again)
			}
		})
	}
}

func TestEOFIsSticky(t *testing.T) {
	c, err := New(bytes.NewReader([]byte("x")), NewGear(testKey()), smallParams())
	if err != nil {
		t.Fatal(err)
	}
	if b, err := c.Next(); err != nil || string(b) != "x" {
		t.Fatalf("Next = %q, %v", b, err)
	}
	for range 3 {
		if b, err := c.Next(); b != nil || !errors.Is(err, io.EOF) {
			t.Fatalf("Next after end = %q, %v, want io.EOF", b, err)
		}
	}
}

// TestCutMatchesReference compares Cut with the byte-at-a-time rule at
// many offsets of random and periodic data, with odd and even region sizes.
func TestCutMatchesReference(t *testing.T) {
	periodic := bytes.Repeat([]byte("abcdefg"), 100<<10)
	tests := []struct {
		name    string
		p       Params
		data    []byte
		offsets int
	}{
		{"small random", smallParams(), randomData(12, 200<<10), 2000},
		{"odd min", Params{Min: 65, Avg: 256, Max: 1023}, randomData(13, 200<<10), 2000},
		{"periodic", Params{Min: 65, Avg: 128, Max: 4001}, periodic, 2000},
		{"default random", DefaultParams(), randomData(14, 20<<20), 20},
	}
	g := NewGear(testKey())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			step := max(1, len(tt.data)/tt.offsets)
			for off := 0; off < len(tt.data); off += step {
				for _, end := range []int{len(tt.data), min(len(tt.data), off+tt.p.Avg+1)} {
					d := tt.data[off:end]
					if got, want := Cut(d, g, tt.p), refCut(d, g, tt.p); got != want {
						t.Fatalf("offset %d, length %d: Cut = %d, reference %d", off, len(d), got, want)
					}
				}
			}
		})
	}
}
