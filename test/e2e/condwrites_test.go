//go:build unix

package e2e

import (
	"strings"
	"testing"
)

// TestS3ConditionalWritesSettings: on each S3 test server (both honour
// both conditional headers), each -s3-conditional-writes setting declares
// its capabilities (shown by -debug) and a repository works end to end with
// the lock protocol that the declared capabilities select: "none" is the
// intents-only fallback a server that accepts the headers without
// honouring them needs.
func TestS3ConditionalWritesSettings(t *testing.T) {
	t.Parallel()
	for _, kind := range []storeKind{{"s3", s3Store}, {"seaweedfs", seaweedfsStore}} {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			testConditionalWritesSettings(t, kind)
		})
	}
}

func testConditionalWritesSettings(t *testing.T, kind storeKind) {
	for _, tc := range []struct{ setting, declares, protocol string }{
		{"auto", "declares create-if-absent true, compare-and-swap true", "lock protocol: intents + create-if-absent + compare-and-swap"},
		{"create-only", "declares create-if-absent true, compare-and-swap false", "lock protocol: intents + create-if-absent (store has no compare-and-swap"},
		{"none", "declares create-if-absent false, compare-and-swap false", "lock protocol: intents only (store has no create-if-absent"},
	} {
		t.Run(tc.setting, func(t *testing.T) {
			t.Parallel()
			r := repoArgs(append(kind.open(t), "-password", "pw", "-s3-conditional-writes", tc.setting))
			res := mustRun(t, r.with("init", "-debug")...)
			if !strings.Contains(res.stderr, tc.declares) {
				t.Errorf("-debug does not say %q:\n%s", tc.declares, res.stderr)
			}
			src := smallTree(t, 7)
			mustRun(t, r.with("backup", "-source", "local:"+src)...)
			mustRun(t, r.with("check")...)
			if res := mustRun(t, r.with("prune", "-debug")...); !strings.Contains(res.stderr, tc.protocol) {
				t.Errorf("-debug does not name the lock protocol %q:\n%s", tc.protocol, res.stderr)
			}
			res = mustRun(t, r.with("list")...)
			if n := strings.Count(res.stdout, "\n"); n < 2 {
				t.Errorf("list shows no snapshot:\n%s", res.stdout)
			}
		})
	}
}
