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
