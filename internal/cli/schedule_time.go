package cli

import (
	"strconv"
	"time"
)

// clockTime is when a job of a scheduler without a randomized delay of
// its own (cron, launchd, Task Scheduler) starts: minute and hour, or
// every hour at minute, and on Mondays only when weekly.
type clockTime struct {
	minute, hour int // hour < 0: every hour
	weekly       bool
}

// jobTime turns -every into a clockTime, shifted by the job's spread so
// a fleet does not start at the same minute. The scheduler names the
// -scheduler in the message when -every is not one it can express.
func jobTime(s schedule, scheduler string) (clockTime, error) {
	off := int(spread(s.name, s.delay) / time.Minute)
	var base int // minutes after midnight
	switch s.every {
	case "hourly":
		return clockTime{minute: off % 60, hour: -1}, nil
	case "daily":
		base = 0
	case "weekly":
		t := off % (24 * 60)
		return clockTime{minute: t % 60, hour: t / 60, weekly: true}, nil
	default:
		m := calendarPattern.FindStringSubmatch(s.every)
		if m == nil {
			return clockTime{}, usageErr("-every %q: with -scheduler %s, give hourly, daily, weekly or \"*-*-* HH:MM\"", s.every, scheduler)
		}
		h, _ := strconv.Atoi(m[1])  // the pattern allows digits only
		mi, _ := strconv.Atoi(m[2]) // as above
		base = h*60 + mi
	}
	t := (base + off) % (24 * 60)
	return clockTime{minute: t % 60, hour: t / 60}, nil
}
