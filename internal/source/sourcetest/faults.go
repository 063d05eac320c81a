package sourcetest

import (
	"context"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/source"
	"github.com/cloudstic/cloudstic/test/fakecloud"
)

// FaultPaths are the request paths (substrings) of a drive's listings and
// downloads on the fake.
type FaultPaths struct {
	List, Download string
}

// RunFaults reads a tree through faults the fake injects: each is
// recovered from (rate limits with Retry-After, Drive's 403
// rateLimitExceeded, 500, a refused access token, streams cut mid-body)
// and the tree read is whole; a rate limit that never ends fails the
// download of that file only. newSource must retry with a short backoff.
func RunFaults(t *testing.T, newSource func(*testing.T, *fakecloud.Client) source.Source, paths FaultPaths) {
	big := strings.Repeat("0123456789abcdef", 40000)
	want := map[string]Entry{"d": "dir", "d/small.txt": "small", "big.bin": big}
	tests := []struct {
		name   string
		faults []fakecloud.Fault
		expire bool
		check  func(t *testing.T, st fakecloud.Stats, bad map[string]error)
	}{
		{name: "429 with Retry-After", faults: []fakecloud.Fault{{Path: paths.List, Status: 429, RetryAfter: 1, Count: 1}}},
		{name: "403 rateLimitExceeded", faults: []fakecloud.Fault{{Path: paths.List, Status: 403, Reason: "rateLimitExceeded", Count: 2},
			{Path: paths.Download, Status: 403, Reason: "userRateLimitExceeded", Count: 1}}},
		{name: "500", faults: []fakecloud.Fault{{Path: paths.Download, Status: 500, Count: 2}, {Path: paths.List, Status: 503, Count: 1}}},
		{name: "401 refreshes once", expire: true, check: func(t *testing.T, st fakecloud.Stats, _ map[string]error) {
			if st.TokenRefresh != 1 {
				t.Errorf("%d token refreshes, want 1", st.TokenRefresh)
			}
		}},
		{name: "cut streams resume", faults: []fakecloud.Fault{{Path: paths.Download, CutAfter: 100000, Count: 3}},
			check: func(t *testing.T, st fakecloud.Stats, _ map[string]error) {
				// Every resumed download starts where the cut one ended.
				if st.BytesServed != int64(len(big)+len("small")) || st.Downloads < 4 {
					t.Errorf("%d downloads, %d bytes served", st.Downloads, st.BytesServed)
				}
			}},
		{name: "endless 429 fails the file only", faults: []fakecloud.Fault{{Path: paths.Download, Status: 429, Count: 1000}},
			check: func(t *testing.T, _ fakecloud.Stats, bad map[string]error) {
				if bad["big.bin"] == nil || bad["d/small.txt"] == nil {
					t.Errorf("downloads through endless 429s succeeded: %v", bad)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := &FakeDrive{C: NewTenant(t), NewSource: newSource}
			src, name := f.Open(t)
			f.MkdirAll(t, "d")
			f.Write(t, "d/small.txt", []byte("small"))
			f.Write(t, "big.bin", []byte(big))
			if err := f.C.ResetStats(ctx); err != nil {
				t.Fatal(err)
			}
			for _, fl := range tc.faults {
				if err := f.C.Fault(ctx, fl); err != nil {
					t.Fatal(err)
				}
			}
			if tc.expire {
				if err := f.C.ExpireAccess(ctx); err != nil {
					t.Fatal(err)
				}
			}
			root, err := src.Root(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := src.(source.Drive).Scan(ctx, nil); err != nil {
				t.Fatal(err)
			}
			got, bad := Read(t, src, root)
			st, err := f.C.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if tc.check != nil {
				tc.check(t, st, bad)
			}
			if len(tc.faults) > 0 && st.FaultsApplied == 0 {
				t.Error("no fault was injected")
			}
			if strings.HasPrefix(tc.name, "endless") {
				return
			}
			if len(bad) > 0 {
				t.Errorf("unreadable: %v", bad)
			}
			same(t, got, want)
		})
	}
}
