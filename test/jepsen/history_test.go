//go:build unix

package jepsen

import (
	"strings"
	"testing"
)

// The checker is tested on hand-written histories: it must find what is
// planted and nothing else.
func TestCheck(t *testing.T) {
	rows := []struct {
		name    string
		history string
		want    []string // substrings of the violations, in order
	}{
		{"clean: shared, then exclusive after release", `
{"proc":"a","mono":10,"event":"acquired","lease":"a1","kind":"shared","safe_end":100}
{"proc":"b","mono":20,"event":"acquired","lease":"b1","kind":"shared","safe_end":100}
{"proc":"a","mono":30,"event":"write","lease":"a1","key":"data/x"}
{"proc":"a","mono":40,"event":"written","lease":"a1","key":"data/x"}
{"proc":"a","mono":50,"event":"released","lease":"a1"}
{"proc":"b","mono":60,"event":"released","lease":"b1"}
{"proc":"c","mono":70,"event":"acquired","lease":"c1","kind":"exclusive","safe_end":170}
{"proc":"c","mono":160,"event":"renewed","lease":"c1","safe_end":260}
{"proc":"c","mono":200,"event":"write","lease":"c1","key":"data/y"}
{"proc":"c","mono":210,"event":"exit","code":0}`, nil},
		{"exclusive overlaps shared", `
{"proc":"a","mono":10,"event":"acquired","lease":"a1","kind":"shared","safe_end":100}
{"proc":"c","mono":50,"event":"acquired","lease":"c1","kind":"exclusive","safe_end":150}
{"proc":"a","mono":60,"event":"released","lease":"a1"}
{"proc":"c","mono":70,"event":"released","lease":"c1"}`, []string{"shared holding of a (lease a1) overlaps exclusive holding of c (lease c1) by 10 ns"}},
		{"two exclusive", `
{"proc":"p","mono":10,"event":"acquired","lease":"p1","kind":"exclusive","safe_end":100}
{"proc":"q","mono":20,"event":"acquired","lease":"q1","kind":"exclusive","safe_end":120}
{"proc":"q","mono":30,"event":"exit","code":1}
{"proc":"p","mono":40,"event":"released","lease":"p1"}`, []string{"exclusive holding of p (lease p1) overlaps exclusive holding of q (lease q1) by 10 ns"}},
		{"killed holder counts until its safe end", `
{"proc":"p","mono":10,"event":"acquired","lease":"p1","kind":"exclusive","safe_end":100}
{"proc":"q","mono":90,"event":"acquired","lease":"q1","kind":"shared","safe_end":190}
{"proc":"q","mono":95,"event":"released","lease":"q1"}`, []string{"exclusive holding of p (lease p1) overlaps shared holding of q (lease q1) by 5 ns"}},
		{"killed holder's safe end passed: no overlap", `
{"proc":"p","mono":10,"event":"acquired","lease":"p1","kind":"exclusive","safe_end":100}
{"proc":"q","mono":101,"event":"acquired","lease":"q1","kind":"shared","safe_end":190}
{"proc":"q","mono":150,"event":"released","lease":"q1"}`, nil},
		{"write after the safe end", `
{"proc":"a","mono":10,"event":"acquired","lease":"a1","kind":"shared","safe_end":100}
{"proc":"a","mono":101,"event":"write","lease":"a1","key":"snapshots/s"}
{"proc":"a","mono":120,"event":"lost","lease":"a1"}`, []string{"a wrote snapshots/s 1 ns after its lease's safe end"}},
		{"exit 0 after losing the lease while working, a request refused", `
{"proc":"a","mono":10,"event":"acquired","lease":"a1","kind":"shared","safe_end":100}
{"proc":"a","mono":50,"event":"lost","lease":"a1"}
{"proc":"a","mono":55,"event":"refused","lease":"a1","key":"data/x"}
{"proc":"a","mono":58,"event":"released","lease":"a1"}
{"proc":"a","mono":60,"event":"exit","code":0}`, []string{"a exited 0 although it lost a lease while working under it and 1 of its requests were refused"}},
		{"exit 1 after a refused request is right", `
{"proc":"a","mono":10,"event":"acquired","lease":"a1","kind":"shared","safe_end":100}
{"proc":"a","mono":50,"event":"lost","lease":"a1"}
{"proc":"a","mono":55,"event":"refused","lease":"a1","key":"data/x"}
{"proc":"a","mono":60,"event":"exit","code":1}`, nil},
		{"exit 0 after a loss that came after the last request", `
{"proc":"a","mono":10,"event":"acquired","lease":"a1","kind":"shared","safe_end":100}
{"proc":"a","mono":20,"event":"write","lease":"a1","key":"snapshots/s"}
{"proc":"a","mono":30,"event":"written","lease":"a1","key":"snapshots/s"}
{"proc":"a","mono":100,"event":"lost","lease":"a1"}
{"proc":"a","mono":110,"event":"released","lease":"a1"}
{"proc":"a","mono":120,"event":"exit","code":0}`, nil},
		{"a refusal after the release began is no failure", `
{"proc":"a","mono":10,"event":"acquired","lease":"a1","kind":"shared","safe_end":100}
{"proc":"a","mono":50,"event":"lost","lease":"a1"}
{"proc":"a","mono":52,"event":"released","lease":"a1"}
{"proc":"a","mono":55,"event":"refused","lease":"a1","key":"data/x"}
{"proc":"a","mono":60,"event":"exit","code":0}`, nil},
		{"a loss after the release began is no failure", `
{"proc":"a","mono":10,"event":"acquired","lease":"a1","kind":"shared","safe_end":100}
{"proc":"a","mono":50,"event":"released","lease":"a1"}
{"proc":"a","mono":51,"event":"lost","lease":"a1"}
{"proc":"a","mono":60,"event":"exit","code":0}`, nil},
		{"write without the lease", `
{"proc":"a","mono":10,"event":"write","lease":"zz","key":"data/x"}`, []string{"a wrote data/x under lease zz, which it does not hold"}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			events, err := Read(strings.NewReader(row.history))
			if err != nil {
				t.Fatal(err)
			}
			rep := Check(events)
			if len(rep.Violations) != len(row.want) {
				t.Fatalf("violations %+v, want %d", rep.Violations, len(row.want))
			}
			for i, w := range row.want {
				if !strings.Contains(rep.Violations[i].What, w) {
					t.Errorf("violation %d: %q, want %q", i, rep.Violations[i].What, w)
				}
			}
		})
	}
}

func TestReadRejectsGarbage(t *testing.T) {
	if _, err := Read(strings.NewReader("{\"proc\":\"a\"}\nnot json\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("got %v, want an error naming line 2", err)
	}
}
