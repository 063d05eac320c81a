package chunker

import (
	"bytes"
	"slices"
	"testing"
)

// The values below pin the repository format (see the package
// documentation). They were computed by an independent Python
// implementation of the documented rule (hmac, hashlib); they must never
// change.

// goldenKey returns the gear key of the golden tests.
func goldenKey() []byte { return []byte("cloudstic golden key") }

func TestGearGolden(t *testing.T) {
	tests := []struct {
		name  string
		key   []byte
		index int
		want  uint64
	}{
		{"entry 0", goldenKey(), 0, 0xef221b9eca851a6b},
		{"entry 1", goldenKey(), 1, 0xe118d82b7333e703},
		{"entry 255", goldenKey(), 255, 0x7b414493c6d10558},
		{"empty key", nil, 0, 0x5cea76f5400066a6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewGear(tt.key)
			if got := g.table[tt.index]; got != tt.want {
				t.Fatalf("gear[%d] = %#x, want %#x", tt.index, got, tt.want)
			}
			if got := g.shifted[tt.index]; got != tt.want<<1 {
				t.Fatalf("shifted[%d] = %#x, want %#x", tt.index, got, tt.want<<1)
			}
		})
	}
}

func TestGearKeyed(t *testing.T) {
	a, b, c := NewGear([]byte("k1")), NewGear([]byte("k1")), NewGear([]byte("k2"))
	if a.table != b.table {
		t.Fatal("same key gave different tables")
	}
	if a.table == c.table {
		t.Fatal("different keys gave the same table")
	}
}

func TestBoundariesGolden(t *testing.T) {
	tests := []struct {
		name string
		p    Params
		size int
		want []int
	}{
		{"small", smallParams(), 16 << 10, []int{
			295, 271, 320, 331, 261, 311, 278, 292, 211, 81, 89, 422, 319, 307, 342, 557,
			279, 285, 284, 437, 169, 316, 463, 146, 290, 257, 96, 285, 343, 403, 288, 336,
			307, 160, 275, 280, 313, 379, 206, 324, 151, 219, 170, 310, 199, 343, 313, 280,
			271, 260, 351, 384, 309, 266, 264, 139, 258, 289,
		}},
		{"default", DefaultParams(), 12 << 20, []int{
			1059982, 1091429, 1495858, 1119679, 1355742, 1314124, 1149763, 889965,
			1269797, 1284209, 552364,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := counterData("cloudstic golden", tt.size)
			got := lengths(chunkAll(t, bytes.NewReader(data), NewGear(goldenKey()), tt.p))
			if !slices.Equal(got, tt.want) {
				t.Fatalf("chunk lengths\n got %v\nwant %v", got, tt.want)
			}
		})
	}
}
