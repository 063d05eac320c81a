package cli

import (
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo/pack"
)

func TestParseCompression(t *testing.T) {
	t.Parallel()
	tests := []struct {
		value string
		local bool
		want  pack.Compression
		ok    bool
	}{
		{"auto", true, pack.S2, true},
		{"auto", false, pack.Zstd, true},
		{"fast", false, pack.S2, true},
		{"small", true, pack.Zstd, true},
		{"off", true, pack.Off, true},
		{"", true, 0, false},
		{"zstd", true, 0, false},
		{"AUTO", true, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			got, err := parseCompression(tt.value, tt.local)
			if (err == nil) != tt.ok || (tt.ok && got != tt.want) {
				t.Errorf("parseCompression(%q, local=%v) = %v, %v; want %v, ok=%v", tt.value, tt.local, got, err, tt.want, tt.ok)
			}
		})
	}
}

func TestIsLocal(t *testing.T) {
	t.Parallel()
	for store, want := range map[string]bool{
		"local:/srv/backup":       true,
		"./backup_store":          true,
		"/mnt/disk:2/backup":      true,
		"./a:b":                   true,
		"relative/dir":            true,
		"s3:bucket/prefix":        false,
		"b2:bucket":               false,
		"sftp://user@host/backup": false,
	} {
		if got := isLocal(store); got != want {
			t.Errorf("isLocal(%q) = %v, want %v", store, got, want)
		}
	}
}
