package pack

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo/crypt"
	"github.com/cloudstic/cloudstic/internal/repo/id"
)

// fuzzMaster is the fixed master secret of the encrypted fuzz key.
var fuzzMaster = bytes.Repeat([]byte{0x42}, crypt.MasterSize)

func fuzzKeys(t testing.TB) map[string]*crypt.Key {
	t.Helper()
	enc, err := crypt.FromMaster(fuzzMaster)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*crypt.Key{"plain": crypt.Unencrypted(make([]byte, 32)), "sealed": enc}
}

// fuzzPack builds a small pack with key and returns its bytes.
func fuzzPack(t testing.TB, key *crypt.Key, blobs ...[]byte) []byte {
	t.Helper()
	c, err := NewCodec(key)
	if err != nil {
		t.Fatal(err)
	}
	b := NewBuilder(1024)
	for i, data := range blobs {
		sealed, err := c.Encode(data)
		if err != nil {
			t.Fatal(err)
		}
		b.Add(BlobType(i%2), key.ID(data), sealed, len(data))
	}
	out, _, _, err := b.Finish(key)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// splitPack returns a pack's sealed header and where it starts.
func splitPack(p []byte) ([]byte, int64) {
	n := int64(binary.LittleEndian.Uint32(p[len(p)-4:]))
	start := int64(len(p)) - 4 - n
	return p[start : len(p)-4], start
}

func FuzzHeaderLength(f *testing.F) {
	for _, k := range fuzzKeys(f) {
		p := fuzzPack(f, k, []byte("hello"), []byte("world"))
		f.Add(p[len(p)-4:], int64(len(p)))
	}
	f.Add([]byte{0xff, 0xff, 0xff, 0xff}, int64(1<<40))
	f.Add([]byte{0, 0, 0}, int64(3))
	f.Fuzz(func(t *testing.T, tail []byte, size int64) {
		n, err := HeaderLength(tail, size)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		if n < 0 || n+4 > size || n > 4+MaxEntries*37+crypt.Overhead {
			t.Fatalf("header length %d accepted for a pack of %d bytes", n, size)
		}
	})
}

func FuzzParseHeader(f *testing.F) {
	keys := fuzzKeys(f)
	for _, name := range []string{"plain", "sealed"} {
		p := fuzzPack(f, keys[name], []byte("a"), bytes.Repeat([]byte("b"), 300), []byte("c"))
		hdr, off := splitPack(p)
		f.Add(name == "sealed", hdr, off)
	}
	f.Add(false, []byte{1, 0, 0, 0}, int64(0))
	f.Add(false, append([]byte{1, 0, 0, 0, 0}, append(make([]byte, 32), 0xff, 0xff, 0xff, 0xff)...), int64(1<<40))
	f.Fuzz(func(t *testing.T, sealed bool, hdr []byte, off int64) {
		if off < 0 {
			return // callers pass size-4-n after HeaderLength checked n+4 <= size
		}
		key := keys["plain"]
		if sealed {
			key = keys["sealed"]
		}
		entries, err := ParseHeader(key, hdr, off)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, crypt.ErrAuth) {
				t.Fatalf("error %v wraps neither ErrCorrupt nor crypt.ErrAuth", err)
			}
			return
		}
		var end int64
		for i, e := range entries {
			if e.Type > TreeBlob || e.Length > MaxBlobSize || int64(e.Offset) != end {
				t.Fatalf("entry %d accepted: %+v (previous end %d)", i, e, end)
			}
			end += int64(e.Length)
		}
		if end > off {
			t.Fatalf("entries end at %d, past the header at %d", end, off)
		}
	})
}

// FuzzCodecDecode feeds arbitrary stored blobs to Decode and DecodeRaw:
// no panic, errors wrap a sentinel, and whatever DecodeRaw accepts is a
// blob Decode accepts under its own id and that survives a round trip. A
// Decoder whose buffers already hold another blob gives Decode's answer.
func FuzzCodecDecode(f *testing.F) {
	keys := fuzzKeys(f)
	codecs := map[string]*Codec{}
	for name, k := range keys {
		c, err := NewCodec(k)
		if err != nil {
			f.Fatal(err)
		}
		codecs[name] = c
		for _, data := range [][]byte{{}, []byte("x"), bytes.Repeat([]byte("compressible "), 100)} {
			for _, comp := range []Compression{Zstd, S2} {
				sealed, err := c.AppendEncode(nil, data, comp)
				if err != nil {
					f.Fatal(err)
				}
				f.Add(name == "sealed", sealed, k.ID(data).String())
			}
		}
	}
	f.Add(false, []byte{encZstd, 0x28, 0xb5, 0x2f, 0xfd}, id.ID{}.String())
	f.Add(false, []byte{encS2, 0xff, 0xff, 0xff, 0xff, 0x0f}, id.ID{}.String())
	f.Add(false, []byte{7}, id.ID{}.String())
	f.Fuzz(func(t *testing.T, sealed bool, stored []byte, want string) {
		c := codecs["plain"]
		if sealed {
			c = codecs["sealed"]
		}
		wantID, _ := id.Parse(want) // a bad id is the zero id, which is fine here
		data, err := c.Decode(stored, wantID)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, crypt.ErrAuth) {
				t.Fatalf("Decode error %v wraps neither ErrCorrupt nor crypt.ErrAuth", err)
			}
		} else if c.Key().ID(data) != wantID {
			t.Fatal("Decode accepted a blob that does not hash to the wanted id")
		}
		checkDecoder(t, c, stored, wantID, data, err)
		raw, err := c.DecodeRaw(stored)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, crypt.ErrAuth) {
				t.Fatalf("DecodeRaw error %v wraps neither ErrCorrupt nor crypt.ErrAuth", err)
			}
			return
		}
		if len(raw) > MaxBlobSize {
			t.Fatalf("DecodeRaw returned %d bytes, more than MaxBlobSize", len(raw))
		}
		if again, err := c.Decode(stored, c.Key().ID(raw)); err != nil || !bytes.Equal(again, raw) {
			t.Fatalf("Decode under the content's own id: %v", err)
		}
		enc, err := c.Encode(raw)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := c.DecodeRaw(enc); err != nil || !bytes.Equal(back, raw) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

// checkDecoder decodes stored with a Decoder that has just decoded another
// blob, expecting Decode's result (data, err), then decodes that other blob
// again.
func checkDecoder(t *testing.T, c *Codec, stored []byte, want id.ID, data []byte, err error) {
	other := bytes.Repeat([]byte("another blob "), 1000)
	otherSealed, encErr := c.Encode(other)
	if encErr != nil {
		t.Fatal(encErr)
	}
	d := c.NewDecoder()
	for _, step := range []struct {
		sealed []byte
		want   id.ID
		data   []byte
		ok     bool
	}{
		{otherSealed, c.Key().ID(other), other, true},
		{stored, want, data, err == nil},
		{otherSealed, c.Key().ID(other), other, true},
	} {
		got, gotErr := d.Decode(step.sealed, step.want)
		if (gotErr == nil) != step.ok || (step.ok && !bytes.Equal(got, step.data)) {
			t.Fatalf("Decoder.Decode = %d bytes, %v; Codec.Decode gave %d bytes, ok %v", len(got), gotErr, len(step.data), step.ok)
		}
	}
}
