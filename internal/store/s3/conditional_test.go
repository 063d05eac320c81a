package s3

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/cloudstic/cloudstic/internal/store"
)

func TestParseConditionalWrites(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want ConditionalWrites
		ok   bool
	}{
		{"", ConditionalAuto, true}, {"auto", ConditionalAuto, true}, {"create-only", ConditionalCreateOnly, true},
		{"none", ConditionalNone, true}, {"None", 0, false}, {"cas", 0, false}, {"create-only ", 0, false},
	} {
		got, err := ParseConditionalWrites(tc.in)
		if tc.ok && (err != nil || got != tc.want) {
			t.Errorf("ParseConditionalWrites(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
		if !tc.ok && !errors.Is(err, ErrBadConditionalWrites) {
			t.Errorf("ParseConditionalWrites(%q) = %v, %v; want ErrBadConditionalWrites", tc.in, got, err)
		}
	}
}

// TestConditionalWritesSetting: against the real S3 server (which honours
// both headers), each setting declares exactly its capabilities, the store
// refuses the conditional puts it does not declare, and "none" makes no
// probe request. A server that ignores If-None-Match keeps create-only from
// declaring more than the probe found.
func TestConditionalWritesSetting(t *testing.T) {
	eachServer(t, func(t *testing.T, e testEnv) {
		all := store.Capabilities{CreateIfAbsent: true, CompareAndSwap: true}
		cases := []struct {
			name    string
			setting ConditionalWrites
			strip   []string
			want    store.Capabilities
		}{
			{"auto", ConditionalAuto, nil, all},
			{"create-only", ConditionalCreateOnly, nil, store.Capabilities{CreateIfAbsent: true}},
			{"none", ConditionalNone, nil, store.Capabilities{}},
			{"create-only on a server ignoring If-None-Match", ConditionalCreateOnly, []string{"If-None-Match"}, store.Capabilities{}},
			{"auto on a server ignoring If-None-Match", ConditionalAuto, []string{"If-None-Match"}, store.Capabilities{CompareAndSwap: true}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				ctx := context.Background()
				cfg := e.config(t, FlavorS3)
				cfg.ConditionalWrites = c.setting
				// The probe's key is deleted beside the test's requests.
				var mu sync.Mutex
				var logged []string
				cfg.Logf = func(format string, args ...any) {
					mu.Lock()
					defer mu.Unlock()
					logged = append(logged, format)
				}
				s, err := open(ctx, cfg, stripHeaders(c.strip...))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cleanPrefix(t, cfg) })
				defer s.Close() //nolint:errcheck // only drops idle connections; it never fails
				if got := s.Capabilities(); got != c.want {
					t.Fatalf("Capabilities = %+v, want %+v", got, c.want)
				}
				if c.setting == ConditionalNone {
					if req, _, _ := s.Stats(); req != 1 {
						t.Errorf("%d requests at open with none, want 1 (the bucket check, no probe)", req)
					}
				}
				info, err := s.Put(ctx, "k", []byte("one"), store.PutOptions{})
				if err != nil {
					t.Fatal(err)
				}
				_, err = s.Put(ctx, "new", []byte("x"), store.PutOptions{IfAbsent: true})
				if c.want.CreateIfAbsent != (err == nil) || (err != nil && !errors.Is(err, store.ErrUnsupported)) {
					t.Errorf("create-if-absent put: %v (declared %v)", err, c.want.CreateIfAbsent)
				}
				_, err = s.Put(ctx, "k", []byte("two"), store.PutOptions{IfVersion: info.Version})
				if c.want.CompareAndSwap != (err == nil) || (err != nil && !errors.Is(err, store.ErrUnsupported)) {
					t.Errorf("compare-and-swap put: %v (declared %v)", err, c.want.CompareAndSwap)
				}
				mu.Lock()
				defer mu.Unlock()
				if !strings.Contains(strings.Join(logged, "\n"), "declares create-if-absent") {
					t.Errorf("Logf was not told the declared capabilities: %q", logged)
				}
			})
		}
	})
}
