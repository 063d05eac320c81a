package repo

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"
)

func FuzzDecodeConfig(f *testing.F) {
	now := time.Date(2026, 3, 7, 9, 0, 0, 0, time.UTC)
	for _, encrypted := range []bool{true, false} {
		c, err := defaultConfig(encrypted, now)
		if err != nil {
			f.Fatal(err)
		}
		if !encrypted {
			c.ChunkerKey = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
		}
		data, err := json.MarshalIndent(c, "", "  ")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"version":2,"id":"x","encrypted":true}`))
	f.Add([]byte(`{"version":1,"encrypted":true,"chunker":{"min":64,"avg":128,"max":129},"pack_size":1048576}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"version":1,"id":"x","encrypted":false,"chunker":{"min":524288,"avg":1048576,"max":8388608},"pack_size":16777216,"chunker_key":"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff","mac":"00"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := DecodeConfig(data)
		if err != nil {
			if !errors.Is(err, ErrCorruptConfig) && !errors.Is(err, ErrUnsupportedVersion) && !errors.Is(err, ErrDowngrade) {
				t.Fatalf("error %v wraps none of ErrCorruptConfig, ErrUnsupportedVersion, ErrDowngrade", err)
			}
			return
		}
		if c.Version != FormatVersion {
			t.Fatalf("version %d accepted", c.Version)
		}
		again, err := json.Marshal(c)
		if err != nil {
			return // a created time JSON cannot hold; the config is never re-encoded
		}
		c2, err := DecodeConfig(again)
		if err != nil {
			t.Fatalf("re-encoded config does not decode: %v", err)
		}
		if !c.Created.Equal(c2.Created) {
			t.Fatalf("created %v != %v", c.Created, c2.Created)
		}
		c.Created, c2.Created = time.Time{}, time.Time{}
		if !reflect.DeepEqual(c, c2) {
			t.Fatalf("round trip: %+v != %+v", c, c2)
		}
	})
}
