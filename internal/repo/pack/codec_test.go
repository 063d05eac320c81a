package pack

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/klauspost/compress/s2"

	"github.com/cloudstic/cloudstic/internal/repo/crypt"
	"github.com/cloudstic/cloudstic/internal/repo/id"
)

func TestCodecCompressions(t *testing.T) {
	random := make([]byte, 300<<10)
	if _, err := rand.Read(random); err != nil {
		t.Fatal(err)
	}
	text := logText(300 << 10)
	keys := fuzzKeys(t)
	cases := []struct {
		name string
		comp Compression
		data []byte
		enc  byte // encoding byte of the stored plaintext
	}{
		{"zstd text", Zstd, text, encZstd},
		{"s2 text", S2, text, encS2},
		{"off text", Off, text, encRaw},
		{"zstd random", Zstd, random, encRaw},
		{"s2 random", S2, random, encRaw},
		{"zstd empty", Zstd, nil, encRaw},
		{"s2 empty", S2, nil, encRaw},
		{"s2 one byte", S2, []byte("x"), encRaw},
	}
	for keyName, key := range keys {
		c, err := NewCodec(key)
		if err != nil {
			t.Fatal(err)
		}
		// One Decoder for every case: its buffers hold the previous
		// case's blob, of another encoding, when the next one comes.
		dec := c.NewDecoder()
		withBufs := c.NewDecoderWith(make([]byte, 0, 100), make([]byte, 0, 100))
		for _, tc := range cases {
			t.Run(keyName+"/"+tc.name, func(t *testing.T) {
				want := c.Key().ID(tc.data)
				stored, err := c.AppendEncode([]byte("prefix"), tc.data, tc.comp)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.HasPrefix(stored, []byte("prefix")) {
					t.Fatal("AppendEncode did not append to dst")
				}
				stored = stored[len("prefix"):]
				plain, err := key.Open(nil, stored)
				if err != nil {
					t.Fatal(err)
				}
				if plain[0] != tc.enc {
					t.Errorf("encoding %d, want %d", plain[0], tc.enc)
				}
				for name, decode := range map[string]func([]byte, id.ID) ([]byte, error){
					"Codec.Decode": func(b []byte, w id.ID) ([]byte, error) { return c.Decode(b, w) },
					"Decoder":      func(b []byte, w id.ID) ([]byte, error) { return dec.Decode(b, w) },
					"DecoderWith":  func(b []byte, w id.ID) ([]byte, error) { return withBufs.Decode(b, w) },
					"DecodeInPlace": func(b []byte, w id.ID) ([]byte, error) {
						return withBufs.DecodeInPlace(bytes.Clone(b), w)
					},
				} {
					got, err := decode(stored, want)
					if err != nil || !bytes.Equal(got, tc.data) {
						t.Errorf("%s: %d bytes, %v; want the %d bytes encoded", name, len(got), err, len(tc.data))
					}
				}
				raw, err := c.DecodeRaw(stored)
				if err != nil || !bytes.Equal(raw, tc.data) {
					t.Errorf("DecodeRaw: %d bytes, %v", len(raw), err)
				}
			})
		}
	}
	if tc := cases[1]; len(mustEncode(t, keys["plain"], tc.data, S2)) >= len(mustEncode(t, keys["plain"], tc.data, Off)) {
		t.Error("s2 did not shrink log text")
	}
}

func mustEncode(t *testing.T, key *crypt.Key, data []byte, comp Compression) []byte {
	t.Helper()
	c, err := NewCodec(key)
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.AppendEncode(nil, data, comp)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDecodeInPlaceRefuses: decoding in place still authenticates the
// blob and checks its id.
func TestDecodeInPlaceRefuses(t *testing.T) {
	for keyName, key := range fuzzKeys(t) {
		c, err := NewCodec(key)
		if err != nil {
			t.Fatal(err)
		}
		data := logText(10 << 10)
		stored := mustEncode(t, key, data, S2)
		tampered := bytes.Clone(stored)
		tampered[len(tampered)/2] ^= 1
		cases := []struct {
			name   string
			sealed []byte
			want   id.ID
			err    error
		}{
			{"ok", stored, key.ID(data), nil},
			{"other id", stored, key.ID([]byte("other")), ErrCorrupt},
			{"tampered", tampered, key.ID(data), crypt.ErrAuth},
		}
		for _, tc := range cases {
			t.Run(keyName+"/"+tc.name, func(t *testing.T) {
				if key.SealedSize(0) == 0 && errors.Is(tc.err, crypt.ErrAuth) {
					tc.err = ErrCorrupt // no seal: the id check finds it
				}
				got, err := c.NewDecoder().DecodeInPlace(bytes.Clone(tc.sealed), tc.want)
				if !errors.Is(err, tc.err) || (err == nil && !bytes.Equal(got, data)) {
					t.Fatalf("%d bytes, %v; want %v", len(got), err, tc.err)
				}
			})
		}
	}
}

// TestS2HostileLength: an s2 block that claims more than a blob may hold
// is refused before anything of that size is allocated.
func TestS2HostileLength(t *testing.T) {
	key := fuzzKeys(t)["plain"]
	c, err := NewCodec(key)
	if err != nil {
		t.Fatal(err)
	}
	small := s2.Encode(nil, bytes.Repeat([]byte("a"), 1000))
	cases := []struct {
		name    string
		payload []byte
	}{
		// A varint length of 2^32-1, then nothing.
		{"huge length", []byte{0xff, 0xff, 0xff, 0xff, 0x0f}},
		{"just over the bound", append(binary.AppendUvarint(nil, MaxBlobSize+1), 0)},
		{"truncated", small[:len(small)-1]},
		{"bad varint", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{"empty", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stored := append([]byte{encS2}, tc.payload...)
			if _, err := c.DecodeRaw(stored); !errors.Is(err, ErrCorrupt) {
				t.Errorf("DecodeRaw: %v, want ErrCorrupt", err)
			}
			if _, err := c.Decode(stored, c.Key().ID(nil)); !errors.Is(err, ErrCorrupt) {
				t.Errorf("Decode: %v, want ErrCorrupt", err)
			}
		})
	}
}
