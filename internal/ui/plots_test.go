package ui

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
)

func TestSizeTicks(t *testing.T) {
	cases := []struct {
		max  int64
		want []int64
	}{
		{1, []int64{0, 1}},
		{3, []int64{0, 1, 2, 3}},
		{1000, []int64{0, 500, 1000}},
		{5 << 20, []int64{0, 2 << 20, 4 << 20}},
		{3 << 30, []int64{0, 1 << 30, 2 << 30, 3 << 30}},
		{1536, []int64{0, 512, 1024, 1536}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.max), func(t *testing.T) {
			if got := sizeTicks(c.max); !slices.Equal(got, c.want) {
				t.Fatalf("sizeTicks(%d) = %v, want %v", c.max, got, c.want)
			}
		})
	}
}

// TestGrowthAxis: the growth plot has a y axis scale: grid lines labelled
// with sizes, and the ratio at the same heights.
func TestGrowthAxis(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rows := []operation.GrowthRow{{Time: t0, StoredSize: 1 << 20}, {Time: t0.Add(time.Hour), StoredSize: 3 << 20}}
	svg := growthSVG(rows)
	for _, want := range []string{`class="grid"`, ">0 B</text>", ">1.0 MiB</text>", ">2.0 MiB</text>", ">3.0 MiB</text>", "x</text>"} {
		if !strings.Contains(svg, want) {
			t.Errorf("growth plot lacks %q:\n%s", want, svg)
		}
	}
}
