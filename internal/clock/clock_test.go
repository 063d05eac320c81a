package clock_test

import (
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
)

// Advance moves wall and monotonic time and fires timers; Set moves only
// the wall clock (a clock set, a machine waking) and fires nothing; Offset
// shifts the wall clock only.
func TestFake(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	steps := []struct {
		name     string
		do       func(f *clock.Fake)
		wantWall time.Time
		wantMono time.Duration
		fired    bool
	}{
		{"advance short of the timer", func(f *clock.Fake) { f.Advance(5 * time.Second) }, start.Add(5 * time.Second), 5 * time.Second, false},
		{"wall jump forward", func(f *clock.Fake) { f.Set(start.Add(time.Hour)) }, start.Add(time.Hour), 5 * time.Second, false},
		{"wall jump back", func(f *clock.Fake) { f.Set(start) }, start, 5 * time.Second, false},
		{"advance to the timer", func(f *clock.Fake) { f.Advance(5 * time.Second) }, start.Add(5 * time.Second), 10 * time.Second, true},
	}
	f := clock.NewFake(start)
	timer := f.After(10 * time.Second)
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			s.do(f)
			if !f.Now().Equal(s.wantWall) || f.Mono() != s.wantMono {
				t.Fatalf("now %v mono %v, want %v %v", f.Now(), f.Mono(), s.wantWall, s.wantMono)
			}
			select {
			case <-timer:
				if !s.fired {
					t.Fatal("timer fired early")
				}
			default:
				if s.fired {
					t.Fatal("timer did not fire")
				}
			}
		})
	}
	o := clock.Offset{Clock: f, By: -2 * time.Minute}
	if !o.Now().Equal(f.Now().Add(-2*time.Minute)) || o.Mono() != f.Mono() {
		t.Fatalf("offset clock: %v %v", o.Now(), o.Mono())
	}
}

func TestRealMonoAdvances(t *testing.T) {
	c := clock.Real{}
	a := c.Mono()
	<-c.After(time.Millisecond)
	if b := c.Mono(); b <= a {
		t.Fatalf("monotonic reading went from %v to %v", a, b)
	}
}
