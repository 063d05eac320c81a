package fault_test

import (
	"errors"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/store/fault"
)

func TestParse(t *testing.T) {
	tests := []struct {
		spec    string
		want    fault.Config
		wantErr bool
	}{
		{"", fault.Config{}, false},
		{"seed=1,error=0.05,killat=17", fault.Config{Seed: 1, ErrorRate: 0.05, KillAt: 17}, false},
		{" seed = -3 , short=1, latency=0.5,latencyms=20, ackloss=0.01, killmidput=true ",
			fault.Config{Seed: -3, ShortReadRate: 1, LatencyRate: 0.5, Latency: 20 * time.Millisecond, AckLossRate: 0.01, KillMidPut: true}, false},
		{"error=1.5", fault.Config{}, true},
		{"error=NaN", fault.Config{}, true},
		{"killat=-1", fault.Config{}, true},
		{"latencyms=99999999", fault.Config{}, true},
		{"bogus=1", fault.Config{}, true},
		{"seed", fault.Config{}, true},
		{"seed=x", fault.Config{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.spec, func(t *testing.T) {
			got, err := fault.Parse(tc.spec)
			if tc.wantErr {
				if !errors.Is(err, fault.ErrBadSpec) {
					t.Fatalf("Parse(%q) = %+v, %v; want ErrBadSpec", tc.spec, got, err)
				}
				return
			}
			if err != nil || got.String() != tc.want.String() {
				t.Fatalf("Parse(%q) = %v, %v; want %v", tc.spec, got, err, tc.want)
			}
		})
	}
}

// FuzzParse: Parse never panics, and what it accepts survives a round trip
// through String.
func FuzzParse(f *testing.F) {
	f.Add("seed=1,error=0.05,killat=17")
	f.Add("latency=1,latencyms=5,short=0.5,killmidput=1,ackloss=0")
	f.Add("error=1e-3,,")
	f.Fuzz(func(t *testing.T, spec string) {
		c, err := fault.Parse(spec)
		if err != nil {
			return
		}
		again, err := fault.Parse(c.String())
		if err != nil || again.String() != c.String() {
			t.Fatalf("round trip of %q: %v -> %v, %v", spec, c, again, err)
		}
	})
}
