package cloud

import (
	"encoding/binary"
	"hash"
)

// quickXorSize is the size of a QuickXorHash, 160 bits.
const quickXorSize = 20

// quickXor is Microsoft's QuickXorHash, OneDrive's checksum of every file
// (the only one OneDrive for Business gives): each byte of the content is
// XORed into a 160-bit circular register at a bit position that moves 11
// bits per byte; the content's length, little-endian, is XORed into the
// register's last 8 bytes at the end. The register is read little-endian.
type quickXor struct {
	reg    [quickXorSize]byte
	length uint64
}

// NewQuickXor returns a QuickXorHash.
func NewQuickXor() hash.Hash { return &quickXor{} }

func (q *quickXor) Write(b []byte) (int, error) {
	for _, c := range b {
		bit := (q.length * 11) % (quickXorSize * 8)
		i, shift := bit/8, bit%8
		q.reg[i] ^= c << shift
		if shift > 0 {
			q.reg[(i+1)%quickXorSize] ^= c >> (8 - shift)
		}
		q.length++
	}
	return len(b), nil
}

func (q *quickXor) Sum(b []byte) []byte {
	out := q.reg
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], q.length)
	for i := range n {
		out[quickXorSize-8+i] ^= n[i]
	}
	return append(b, out[:]...)
}

func (q *quickXor) Reset()         { *q = quickXor{} }
func (q *quickXor) Size() int      { return quickXorSize }
func (q *quickXor) BlockSize() int { return 64 }
