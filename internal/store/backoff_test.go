package store

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

const ms = time.Millisecond

// s3Backoff and sftpBackoff are the stores' default rules.
var (
	s3Backoff   = Backoff{First: 500 * ms, Max: 8 * time.Second, Budget: 30 * time.Second}
	sftpBackoff = Backoff{First: 500 * ms, Budget: 30 * time.Second, Retries: 5}
)

// fixed returns a Rand that always returns r.
func fixed(r float64) func() float64 { return func() float64 { return r } }

// TestBackoffNominal: the nominal waits double from First up to Max, and
// do not overflow when nothing caps them.
func TestBackoffNominal(t *testing.T) {
	s := time.Second
	cases := []struct {
		name string
		b    Backoff
		want []time.Duration // Nominal(1), Nominal(2)...
	}{
		{"s3", s3Backoff, []time.Duration{500 * ms, s, 2 * s, 4 * s, 8 * s, 8 * s, 8 * s}},
		{"sftp", sftpBackoff, []time.Duration{500 * ms, s, 2 * s, 4 * s, 8 * s, 16 * s}},
		{"first above max", Backoff{First: time.Minute, Max: 8 * s}, []time.Duration{8 * s, 8 * s}},
		{"zero", Backoff{}, []time.Duration{0, 0, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for i, want := range c.want {
				if got := c.b.Nominal(i + 1); got != want {
					t.Errorf("Nominal(%d) = %v, want %v", i+1, got, want)
				}
			}
		})
	}
	t.Run("no overflow", func(t *testing.T) {
		for n := 1; n < 200; n++ {
			if w := sftpBackoff.Nominal(n); w < sftpBackoff.Nominal(n-1) || w <= 0 {
				t.Fatalf("Nominal(%d) = %v after %v", n, w, sftpBackoff.Nominal(n-1))
			}
		}
	})
}

// TestBackoffJitter: each wait is drawn within [nominal/2, nominal]; a
// fixed Rand gives exact waits, 0 the shortest and 1 the nominal one.
func TestBackoffJitter(t *testing.T) {
	cases := []struct {
		name string
		rand func() float64
		want func(nominal time.Duration) time.Duration // nil: any in the range
	}{
		{"default source", nil, nil},
		{"seeded source", rand.New(rand.NewPCG(1, 2)).Float64, nil},
		{"shortest", fixed(0), func(d time.Duration) time.Duration { return d / 2 }},
		{"nominal", fixed(1), func(d time.Duration) time.Duration { return d }},
		{"three quarters", fixed(0.5), func(d time.Duration) time.Duration { return d * 3 / 4 }},
		{"clamped below", fixed(-3), func(d time.Duration) time.Duration { return d / 2 }},
		{"clamped above", fixed(7), func(d time.Duration) time.Duration { return d }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := Backoff{First: 500 * ms, Max: 8 * time.Second, Rand: c.rand}
			jittered := 0
			for round := range 50 {
				for n := 1; n <= 7; n++ {
					nominal := b.Nominal(n)
					got, ok := b.Wait(n, 0)
					if !ok {
						t.Fatalf("round %d: Wait(%d, 0) refused with no limit", round, n)
					}
					if got < nominal/2 || got > nominal {
						t.Fatalf("round %d: Wait(%d) = %v, outside [%v, %v]", round, n, got, nominal/2, nominal)
					}
					if c.want != nil && got != c.want(nominal) {
						t.Fatalf("Wait(%d) = %v, want %v", n, got, c.want(nominal))
					}
					if got != nominal {
						jittered++
					}
				}
			}
			if c.want == nil && jittered == 0 {
				t.Errorf("every wait drawn was the nominal one: no jitter")
			}
		})
	}
}

// TestBackoffLimits: no retry is left past Retries, nor when its drawn
// wait would end past Budget; a negative limit means no retries.
func TestBackoffLimits(t *testing.T) {
	s := time.Second
	cases := []struct {
		name    string
		b       Backoff
		n       int
		elapsed time.Duration
		rand    float64
		want    time.Duration // 0: no retry left
	}{
		{"sftp first", sftpBackoff, 1, 0, 1, 500 * ms},
		{"sftp fifth", sftpBackoff, 5, 7500 * ms, 1, 8 * s},
		{"sftp past the retries", sftpBackoff, 6, 15500 * ms, 0, 0},
		{"sftp dials timed out", sftpBackoff, 3, 21 * s, 1, 2 * s},
		{"sftp past the budget", sftpBackoff, 3, 29 * s, 1, 0},
		// The budget is checked on the wait drawn: a short draw fits
		// where the nominal wait would not.
		{"short draw within the budget", sftpBackoff, 3, 29 * s, 0, s},
		{"draw ending at the budget", sftpBackoff, 3, 28500 * ms, 0.5, 1500 * ms},
		{"draw just past the budget", sftpBackoff, 3, 28501 * ms, 0.5, 0},
		{"s3 capped", s3Backoff, 7, 15500 * ms, 1, 8 * s},
		{"s3 many retries", s3Backoff, 90, 22 * s, 1, 8 * s},
		{"s3 past the budget", s3Backoff, 7, 23 * s, 1, 0},
		{"no retries", Backoff{First: s, Retries: -1}, 1, 0, 0, 0},
		{"no budget", Backoff{First: s, Budget: -1}, 1, 0, 0, 0},
		{"unbounded", Backoff{First: s, Max: 4 * s}, 1000, time.Hour, 1, 4 * s},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := c.b
			b.Rand = fixed(c.rand)
			got, ok := b.Wait(c.n, c.elapsed)
			if !ok {
				got = 0
			}
			if got != c.want {
				t.Fatalf("Wait(%d, %v) = %v, %v; want %v", c.n, c.elapsed, got, ok, c.want)
			}
		})
	}
}

// TestBackoffSpread: hosts whose sources are seeded differently wait
// differently after the same failure, so that they do not come back in
// lock-step; the same seed gives the same schedule.
func TestBackoffSpread(t *testing.T) {
	schedule := func(seed uint64) []time.Duration {
		b := s3Backoff
		b.Rand = rand.New(rand.NewPCG(seed, seed)).Float64
		var waits []time.Duration
		var elapsed time.Duration
		for n := 1; ; n++ {
			w, ok := b.Wait(n, elapsed)
			if !ok {
				return waits
			}
			waits = append(waits, w)
			elapsed += w
		}
	}
	t.Run("two seeds", func(t *testing.T) {
		a, b := schedule(1), schedule(2)
		if slices.Equal(a, b) {
			t.Fatalf("seeds 1 and 2 give the same schedule %v", a)
		}
		if again := schedule(1); !slices.Equal(a, again) {
			t.Fatalf("seed 1 gives %v, then %v", a, again)
		}
	})
	t.Run("a hundred hosts", func(t *testing.T) {
		// The first waits of 100 hosts cover most of [0.25 s, 0.5 s].
		first := make([]time.Duration, 0, 100)
		for seed := range uint64(100) {
			first = append(first, schedule(seed + 10)[0])
		}
		lo, hi := slices.Min(first), slices.Max(first)
		if lo < 250*ms || hi > 500*ms || hi-lo < 200*ms {
			t.Fatalf("first waits span [%v, %v], want most of [250ms, 500ms]", lo, hi)
		}
		if n := len(slices.Compact(slices.Sorted(slices.Values(first)))); n < 90 {
			t.Fatalf("%d distinct first waits among 100 hosts", n)
		}
	})
}

// TestBackoffMaxRetries: MaxRetries bounds the retries Wait allows, and is
// reached with the shortest draws and attempts that take no time.
func TestBackoffMaxRetries(t *testing.T) {
	cases := []struct {
		name string
		b    Backoff
		want int
	}{
		// Shortest waits 0.25, 0.5, 1, 2, 4, then 4 s: the tenth ends
		// 27.75 s after the start.
		{"s3", s3Backoff, 10},
		{"s3 brief", Backoff{First: 500 * ms, Max: 8 * time.Second, Budget: 2 * time.Second}, 3},
		{"sftp", sftpBackoff, 5},
		{"first wait past the budget", Backoff{First: time.Minute, Budget: time.Second}, 0},
		{"no retries", Backoff{First: time.Second, Retries: -1, Budget: time.Minute}, 0},
		{"no budget", Backoff{First: time.Second, Budget: -1}, 0},
		{"only retries", Backoff{First: time.Second, Retries: 3}, 3},
		{"unbounded", Backoff{First: time.Second}, -1},
		{"waits of nothing", Backoff{Budget: time.Second}, -1},
		{"waits of nothing, counted", Backoff{Budget: time.Second, Retries: 4}, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.b.MaxRetries(); got != c.want {
				t.Fatalf("MaxRetries = %d, want %d", got, c.want)
			}
			if c.want < 0 {
				return
			}
			b := c.b
			b.Rand = fixed(0)
			var elapsed time.Duration
			n := 0
			for ; n <= c.want; n++ {
				w, ok := b.Wait(n+1, elapsed)
				if !ok {
					break
				}
				elapsed += w
			}
			if n != c.want {
				t.Fatalf("%d retries with the shortest waits, MaxRetries %d", n, c.want)
			}
		})
	}
}
