package backup

import (
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

func TestGranularity(t *testing.T) {
	base := time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		nanos []int
		want  time.Duration
	}{
		{"nanoseconds", []int{123456789, 5}, time.Nanosecond},
		{"microseconds", []int{123456000, 7000}, time.Microsecond},
		{"exFAT's 10 ms", []int{120000000, 10000000, 990000000}, 10 * time.Millisecond},
		{"whole seconds", []int{0, 0}, time.Second},
		{"one round value among fine ones", []int{0, 123456789}, time.Nanosecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var times []time.Time
			for _, n := range tc.nanos {
				times = append(times, base.Add(time.Duration(n)))
			}
			if got := granularity(times); got != tc.want {
				t.Errorf("granularity = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestSettledOtherDevice: an entry on another device than the root (a file
// system mounted below it, whose step was not sampled) gets the coarse
// margin.
func TestSettledOtherDevice(t *testing.T) {
	start := time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)
	var w walker
	w.racyMargins(start, 7, 20*time.Millisecond)
	changed := start.Add(-time.Second).UnixNano()
	tests := []struct {
		dev  uint64
		want bool
	}{
		{7, true},
		{8, false},
	}
	for _, tc := range tests {
		n := &tree.Node{Device: tc.dev, MTime: changed, CTime: changed}
		if got := w.settled(n); got != tc.want {
			t.Errorf("device %d: settled = %v, want %v", tc.dev, got, tc.want)
		}
	}
}
