package snapshot

import (
	"reflect"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo/id"
)

// TestExcludesOptional: snapshots written before the excludes field
// existed decode without it, and one without rules does not write it.
func TestExcludesOptional(t *testing.T) {
	old := `{"time":"2026-03-07T09:00:00Z","tree":"` + id.ID{1}.String() + `","source":"local:/home/me","hostname":"h",` +
		`"path":"/home/me","summary":{"files_new":1},"program":"cloudstic","nonce":"MDEyMzQ1Njc4OWFiY2RlZg=="}`
	s, err := Decode([]byte(old))
	if err != nil {
		t.Fatalf("a snapshot of an older version does not decode: %v", err)
	}
	if s.Excludes != nil || s.Summary.FilesNew != 1 {
		t.Errorf("decoded %+v", s)
	}
	data, err := Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "excludes") {
		t.Errorf("a snapshot without rules encodes an excludes field: %s", data)
	}
	s = sampleSnapshot()
	data, err = Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Excludes, s.Excludes) {
		t.Errorf("excludes %+v came back as %+v", s.Excludes, back.Excludes)
	}
}

// TestOriginalOptional: snapshots written before the original field
// existed decode with a zero Original (their own id is the original), a
// never-rewritten snapshot does not write the field, and a rewritten one
// keeps it.
func TestOriginalOptional(t *testing.T) {
	old := `{"time":"2026-03-07T09:00:00Z","tree":"` + id.ID{1}.String() + `","source":"local:/home/me","hostname":"h",` +
		`"path":"/home/me","tags":["a"],"summary":{},"nonce":"MDEyMzQ1Njc4OWFiY2RlZg=="}`
	s, err := Decode([]byte(old))
	if err != nil {
		t.Fatalf("a snapshot of an older version does not decode: %v", err)
	}
	self := id.ID{5}
	if !s.Original.IsZero() || s.OriginalID(self) != self {
		t.Errorf("original %v, OriginalID %v", s.Original, s.OriginalID(self))
	}
	data, err := Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "original") {
		t.Errorf("a snapshot never rewritten encodes an original field: %s", data)
	}
	s.Original = id.ID{6}
	if data, err = Encode(s); err != nil {
		t.Fatal(err)
	}
	back, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if back.Original != (id.ID{6}) || back.OriginalID(self) != (id.ID{6}) {
		t.Errorf("original came back as %v", back.Original)
	}
	if _, err := Decode([]byte(`{"tree":"` + id.ID{1}.String() + `","original":"zz"}`)); err == nil {
		t.Error("a malformed original id accepted")
	}
}
