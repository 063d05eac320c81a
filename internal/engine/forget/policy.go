package forget

import (
	"fmt"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
)

// Reasons a snapshot is kept, as printed and in JSON.
const (
	ReasonLast    = "last"
	ReasonHourly  = "hourly"
	ReasonDaily   = "daily"
	ReasonWeekly  = "weekly"
	ReasonMonthly = "monthly"
	ReasonYearly  = "yearly"
)

// Policy says how many snapshots to keep per kind of period. Zero keeps
// none for that kind. Periods are calendar periods in the policy's
// location; within one period the newest snapshot is the one kept.
type Policy struct {
	Last, Hourly, Daily, Weekly, Monthly, Yearly int
}

// Empty reports whether the policy keeps nothing (such a policy is refused:
// it would remove every snapshot).
func (p Policy) Empty() bool { return p == Policy{} }

// Validate rejects negative counts.
func (p Policy) Validate() error {
	for _, b := range p.buckets() {
		if b.n < 0 {
			return fmt.Errorf("keep-%s %d: must not be negative", b.reason, b.n)
		}
	}
	return nil
}

// String describes the policy, e.g. "keep 3 last, 7 daily".
func (p Policy) String() string {
	s := ""
	for _, b := range p.buckets() {
		if b.n > 0 {
			if s != "" {
				s += ", "
			}
			s += fmt.Sprintf("%d %s", b.n, b.reason)
		}
	}
	if s == "" {
		return "keep nothing"
	}
	return "keep " + s
}

type bucket struct {
	reason string
	n      int
	key    func(t time.Time, seq int) string
}

func (p Policy) buckets() []bucket {
	return []bucket{
		{ReasonLast, p.Last, func(_ time.Time, seq int) string { return fmt.Sprint(seq) }},
		{ReasonHourly, p.Hourly, func(t time.Time, _ int) string { return t.Format("2006-01-02 15") }},
		{ReasonDaily, p.Daily, func(t time.Time, _ int) string { return t.Format("2006-01-02") }},
		{ReasonWeekly, p.Weekly, func(t time.Time, _ int) string {
			y, w := t.ISOWeek()
			return fmt.Sprintf("%04d-W%02d", y, w)
		}},
		{ReasonMonthly, p.Monthly, func(t time.Time, _ int) string { return t.Format("2006-01") }},
		{ReasonYearly, p.Yearly, func(t time.Time, _ int) string { return t.Format("2006") }},
	}
}

// Decision is what the policy decided for one snapshot.
type Decision struct {
	snapshot.WithID
	Keep bool
	// Reasons lists every rule that keeps the snapshot ("daily", ...);
	// for removed snapshots it is empty, or "named" for forget by id.
	Reasons []string
}

// Apply evaluates p on snaps (one group, any order) with calendar periods
// in loc (nil: UTC) and returns a decision per snapshot, newest first.
// Snapshots with equal times are ordered by id, so the result is
// deterministic; the newest of a period wins it.
func Apply(snaps []snapshot.WithID, p Policy, loc *time.Location) []Decision {
	if loc == nil {
		loc = time.UTC
	}
	sorted := append([]snapshot.WithID(nil), snaps...)
	snapshot.SortByTime(sorted)
	out := make([]Decision, len(sorted))
	for i := range sorted {
		out[i] = Decision{WithID: sorted[len(sorted)-1-i]}
	}
	buckets := p.buckets()
	last := make([]string, len(buckets))
	left := make([]int, len(buckets))
	for i, b := range buckets {
		left[i] = b.n
		last[i] = "\x00none"
	}
	for seq := range out {
		d := &out[seq]
		t := d.Time.In(loc)
		for i, b := range buckets {
			if left[i] == 0 {
				continue
			}
			if k := b.key(t, seq); k != last[i] {
				last[i] = k
				left[i]--
				d.Keep = true
				d.Reasons = append(d.Reasons, b.reason)
			}
		}
	}
	return out
}
