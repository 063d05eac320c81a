package jepsen

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Event kinds of a history.
const (
	Acquired = "acquired" // a lock was granted: Kind, Lease, SafeEnd
	Renewed  = "renewed"  // the lease was refreshed: Lease, SafeEnd
	Lost     = "lost"     // the lease was lost: Lease
	Released = "released" // the lock was released: Lease
	WriteBeg = "write"    // a store write (Put or Delete) started: Lease, Key
	WriteEnd = "written"  // that write returned: Lease, Key
	Refused  = "refused"  // a request was refused or cut short, the lease gone: Lease, Key
	Exit     = "exit"     // the process ended: Code, Msg
)

// Event is one line of a history file (JSON).
type Event struct {
	Proc string `json:"proc"`
	// Mono is the machine's monotonic clock in nanoseconds, the same for
	// every process on it.
	Mono    int64  `json:"mono"`
	Event   string `json:"event"`
	Lease   string `json:"lease,omitempty"` // unique per acquisition
	Kind    string `json:"kind,omitempty"`  // "shared" or "exclusive"
	SafeEnd int64  `json:"safe_end,omitempty"`
	Key     string `json:"key,omitempty"`
	Code    int    `json:"code,omitempty"`
	Msg     string `json:"msg,omitempty"`
}

// Read parses a history, one JSON event per line.
func Read(r io.Reader) ([]Event, error) {
	var events []Event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var e Event
		if err := json.Unmarshal([]byte(text), &e); err != nil {
			return nil, fmt.Errorf("history line %d: %w", line, err)
		}
		events = append(events, e)
	}
	return events, sc.Err()
}

// holding is one lease's interval: from its grant to its release or loss,
// but never past the safe end it last announced (a killed or frozen holder
// stops counting there: after it, others may rightly take over).
type holding struct {
	proc, lease, kind string
	start, end        int64
	safeEnd           int64
}

// Violation is one thing that must never happen.
type Violation struct {
	What string
	At   int64
}

// Report sums up a history.
type Report struct {
	Acquisitions, Exclusive, Shared, Lost, Writes int
	// LostInTime counts processes that lost a lease while they worked but
	// had sent every request before: they rightly exit 0.
	LostInTime int
	Violations []Violation
}

// Check replays events (in any order; they are sorted by Mono) and reports
// overlapping holdings, writes started past their lease's safe end, and
// processes that exited 0 although a lease was lost while they worked
// under it and a request of theirs was refused for it before the release
// began (the work swallowed that error). A loss after the work's last
// request is no failure: all of it ran in time.
func Check(events []Event) Report {
	sort.SliceStable(events, func(i, j int) bool { return events[i].Mono < events[j].Mono })
	var rep Report
	open := map[string]*holding{}
	var done []*holding
	lostWhileWorking := map[string]bool{} // by lease
	released := map[string]bool{}         // by lease: its release began
	refusedAfterLoss := map[string]int{}  // by process
	lostProcs := map[string]bool{}        // by process
	closeLease := func(h *holding, at int64) {
		h.end = min(at, h.safeEnd)
		delete(open, h.lease)
		done = append(done, h)
	}
	for _, e := range events {
		h := open[e.Lease]
		switch e.Event {
		case Acquired:
			rep.Acquisitions++
			if e.Kind == "exclusive" {
				rep.Exclusive++
			} else {
				rep.Shared++
			}
			open[e.Lease] = &holding{proc: e.Proc, lease: e.Lease, kind: e.Kind, start: e.Mono, safeEnd: e.SafeEnd}
		case Renewed:
			if h != nil && e.SafeEnd > h.safeEnd {
				h.safeEnd = e.SafeEnd
			}
		case WriteBeg:
			rep.Writes++
			switch {
			case h == nil:
				rep.Violations = append(rep.Violations, Violation{fmt.Sprintf("%s wrote %s under lease %s, which it does not hold", e.Proc, e.Key, e.Lease), e.Mono})
			case e.Mono > h.safeEnd:
				rep.Violations = append(rep.Violations, Violation{fmt.Sprintf("%s wrote %s %d ns after its lease's safe end", e.Proc, e.Key, e.Mono-h.safeEnd), e.Mono})
			}
		case Refused:
			if lostWhileWorking[e.Lease] && !released[e.Lease] {
				refusedAfterLoss[e.Proc]++
			}
		case Lost, Released:
			if e.Event == Lost {
				rep.Lost++
				if h != nil {
					lostWhileWorking[e.Lease] = true
					lostProcs[e.Proc] = true
				}
			} else {
				released[e.Lease] = true
			}
			if h != nil {
				closeLease(h, e.Mono)
			}
		case Exit:
			switch n := refusedAfterLoss[e.Proc]; {
			case e.Code == 0 && n > 0:
				rep.Violations = append(rep.Violations, Violation{fmt.Sprintf("%s exited 0 although it lost a lease while working under it and %d of its requests were refused", e.Proc, n), e.Mono})
			case e.Code == 0 && lostProcs[e.Proc]:
				rep.LostInTime++
			}
			for _, h := range open {
				if h.proc == e.Proc {
					closeLease(h, e.Mono)
				}
			}
		}
	}
	for _, h := range open { // never released: a killed process
		closeLease(h, h.safeEnd)
	}
	rep.Violations = append(rep.Violations, overlaps(done)...)
	return rep
}

// overlaps finds exclusive holdings that overlap any other holding.
func overlaps(hs []*holding) []Violation {
	sort.Slice(hs, func(i, j int) bool { return hs[i].start < hs[j].start })
	var out []Violation
	for i, a := range hs {
		for _, b := range hs[i+1:] {
			if b.start >= a.end {
				break // sorted by start: no later holding overlaps a
			}
			if a.kind == "exclusive" || b.kind == "exclusive" {
				out = append(out, Violation{fmt.Sprintf("%s holding of %s (lease %s) overlaps %s holding of %s (lease %s) by %d ns",
					a.kind, a.proc, a.lease, b.kind, b.proc, b.lease, min(a.end, b.end)-b.start), b.start})
			}
		}
	}
	return out
}
