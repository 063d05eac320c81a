package operation

import (
	"testing"
	"time"
)

func TestRateWindow(t *testing.T) {
	var r rateWindow
	if got := r.add(time.Second, 100); got != 100 {
		t.Fatalf("first rate = %v", got)
	}
	for i := 2; i <= 100; i++ {
		r.add(time.Duration(i)*time.Second, int64(i)*100)
	}
	if got := r.add(101*time.Second, 101*100+2500); got <= 100 || got > 300 {
		t.Fatalf("windowed rate = %v, want the recent speed-up to show", got)
	}
}

func TestETA(t *testing.T) {
	for _, tc := range []struct {
		done, total int64
		rate        float64
		want        time.Duration
	}{
		{50, 100, 10, 5 * time.Second},
		{100, 100, 10, 0},
		{150, 100, 10, 0},
		{50, 0, 10, -time.Second},
		{50, 100, 0, -time.Second},
	} {
		if got := eta(tc.done, tc.total, tc.rate); got != tc.want {
			t.Errorf("eta(%d, %d, %v) = %v, want %v", tc.done, tc.total, tc.rate, got, tc.want)
		}
	}
}
