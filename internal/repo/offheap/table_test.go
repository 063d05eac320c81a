package offheap

import (
	"testing"
)

type plainRow struct {
	ID    [32]byte
	Count uint32
	Bytes int64
}

// TestTables checks that a table is zeroed and holds what is written, that
// a vector keeps every value across its chunks, and that a type holding
// pointers is refused.
func TestTables(t *testing.T) {
	tab, free, err := MakeTable[plainRow](100_000)
	if err != nil {
		t.Fatal(err)
	}
	for i := range tab {
		if tab[i] != (plainRow{}) {
			t.Fatalf("row %d not zeroed", i)
		}
		tab[i].Count = uint32(i)
	}
	if tab[99_999].Count != 99_999 {
		t.Fatalf("last row %+v", tab[99_999])
	}
	free()
	if empty, free, err := MakeTable[uint32](0); err != nil || len(empty) != 0 {
		t.Fatalf("empty table: %v, %v", empty, err)
	} else {
		free()
	}

	var v Vector[plainRow]
	const n = 2*vectorChunk + 5
	for i := range n {
		if err := v.Append(plainRow{ID: [32]byte{byte(i), byte(i >> 8), byte(i >> 16)}, Bytes: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if v.Len() != n {
		t.Fatalf("%d values, want %d", v.Len(), n)
	}
	for _, i := range []int{0, vectorChunk - 1, vectorChunk, 2 * vectorChunk, n - 1} {
		if got := v.At(i); got.Bytes != int64(i) || got.ID[0] != byte(i) || got.ID[1] != byte(i>>8) {
			t.Errorf("At(%d) = %+v", i, got)
		}
	}
	v.Free()
	if v.Len() != 0 {
		t.Errorf("%d values after Free", v.Len())
	}

	refused := []struct {
		name string
		make func()
	}{
		{"pointer", func() { _, _, _ = MakeTable[*int](1) }},
		{"string field", func() { _, _, _ = MakeTable[struct{ S string }](1) }},
		{"slice in a vector", func() { var v Vector[[]byte]; _ = v.Append(nil) }},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("a type holding pointers was accepted")
				}
			}()
			tc.make()
		})
	}
}
