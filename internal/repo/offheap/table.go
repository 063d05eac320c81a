package offheap

import (
	"fmt"
	"reflect"
	"unsafe"
)

// Tables of plain values outside the Go heap: check, prune and repair keep
// a few dozen bytes for each pack of the repository (6 M packs at 100 M
// blobs), and on the heap the collector lets such a table's garbage grow
// to its own size again before it runs (GOGC=100), which doubled their
// peak. Here they count once. T must hold no pointers (the collector does
// not look into this memory): MakeTable and Vector refuse such a T.

// MakeTable returns a zeroed table of n values of T and the function that
// releases it; the table must not be used after that.
func MakeTable[T any](n int) ([]T, func(), error) {
	mustBePlain[T]()
	if n == 0 {
		return nil, func() {}, nil
	}
	var zero T
	raw, err := Map(n * int(unsafe.Sizeof(zero)))
	if err != nil {
		return nil, nil, fmt.Errorf("mapping a table of %d values: %w", n, err)
	}
	t := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(raw))), n)
	// The mapping is released once; Unmap fails only on a bad address.
	return t, func() { _ = Unmap(raw) }, nil
}

// vectorChunk is the number of values of a Vector's chunk.
const vectorChunk = 1 << 16

// Vector is a table of values of T that grows by Append, in chunks of
// vectorChunk values outside the Go heap (so growing never copies it).
// Its zero value is empty and ready; Free releases it.
type Vector[T any] struct {
	chunks [][]T
	raw    [][]byte
	n      int
}

// Append adds x at the end.
func (v *Vector[T]) Append(x T) error {
	if v.n == len(v.chunks)*vectorChunk {
		mustBePlain[T]()
		var zero T
		raw, err := Map(vectorChunk * int(unsafe.Sizeof(zero)))
		if err != nil {
			return fmt.Errorf("growing a table past %d values: %w", v.n, err)
		}
		v.raw = append(v.raw, raw)
		v.chunks = append(v.chunks, unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(raw))), vectorChunk))
	}
	v.chunks[v.n/vectorChunk][v.n%vectorChunk] = x
	v.n++
	return nil
}

// Len is the number of values appended.
func (v *Vector[T]) Len() int { return v.n }

// At returns the value at i (0 ≤ i < Len).
func (v *Vector[T]) At(i int) T {
	if i < 0 || i >= v.n {
		panic(fmt.Sprintf("offheap: index %d of a table of %d", i, v.n))
	}
	return v.chunks[i/vectorChunk][i%vectorChunk]
}

// Free releases the vector's memory and empties it.
func (v *Vector[T]) Free() {
	for _, raw := range v.raw {
		_ = Unmap(raw) // released once; fails only on a bad address
	}
	*v = Vector[T]{}
}

// mustBePlain panics when T holds a pointer: a programming error, which
// would let the collector free what the table still points to.
func mustBePlain[T any]() {
	if t := reflect.TypeFor[T](); hasPointers(t) {
		panic("offheap: " + t.String() + " holds pointers")
	}
}

func hasPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return false
	case reflect.Array:
		return t.Len() > 0 && hasPointers(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if hasPointers(t.Field(i).Type) {
				return true
			}
		}
		return false
	default: // pointers, slices, strings, maps, interfaces, channels, functions
		return true
	}
}
