package cli

import "testing"

func TestShortDuration(t *testing.T) {
	cases := []struct {
		seconds float64
		want    string
	}{
		{0, "0s"},
		{45, "45s"},
		{90, "1m30s"},
		{600, "10m"},
		{3600, "1h"},
		{5400, "1h30m"},
		{3601, "1h0m1s"},
		{86400, "24h"},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			if got := shortDuration(c.seconds); got != c.want {
				t.Errorf("shortDuration(%v) = %q, want %q", c.seconds, got, c.want)
			}
		})
	}
}
