package cloud

import (
	"encoding/base64"
	"testing"
)

// TestQuickXor checks the hash against published vectors (input and hash
// in base64), written whole and a byte at a time.
func TestQuickXor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"", "AAAAAAAAAAAAAAAAAAAAAAAAAAA="},
		{"Sg==", "SgAAAAAAAAAAAAAAAQAAAAAAAAA="},
		{"tbQ=", "taAFAAAAAAAAAAAAAgAAAAAAAAA="},
		{"0pZP", "0rDEEwAAAAAAAAAAAwAAAAAAAAA="},
		{"jRRDVA==", "jaDAEKgAAAAAAAAABAAAAAAAAAA="},
		{"/aNzzCFPS/A=", "/RjFHJgRgicsAR4ACAAAAAAAAAA="},
	} {
		t.Run(tc.in, func(t *testing.T) {
			in, err := base64.StdEncoding.DecodeString(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			whole := NewQuickXor()
			whole.Write(in)
			bytewise := NewQuickXor()
			for _, c := range in {
				bytewise.Write([]byte{c})
			}
			for name, h := range map[string][]byte{"whole": whole.Sum(nil), "bytewise": bytewise.Sum(nil)} {
				if got := base64.StdEncoding.EncodeToString(h); got != tc.want {
					t.Errorf("%s: %s, want %s", name, got, tc.want)
				}
			}
		})
	}
}
