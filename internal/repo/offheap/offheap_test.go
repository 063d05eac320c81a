package offheap

import "testing"

// TestMap: mapped memory is zeroed, writable to its last byte and
// released without error.
func TestMap(t *testing.T) {
	for _, size := range []int{1, 4096, 3<<20 + 5} {
		b, err := Map(size)
		if err != nil {
			t.Fatalf("Map(%d): %v", size, err)
		}
		if len(b) != size {
			t.Fatalf("Map(%d) gave %d bytes", size, len(b))
		}
		for i := 0; i < size; i += 4096 {
			if b[i] != 0 {
				t.Fatalf("Map(%d): byte %d is %d, want 0", size, i, b[i])
			}
			b[i] = 1
		}
		b[size-1] = 2
		AdviseHugePages(b)
		if err := Unmap(b); err != nil {
			t.Fatalf("Unmap(%d bytes): %v", size, err)
		}
	}
}
