package lock

import "time"

// Trace events, for Options.Trace.
const (
	TraceAcquired = "acquired"
	TraceRenewed  = "renewed"
	TraceLost     = "lost"
	TraceReleased = "released"
	TraceWrite    = "write"   // a fenced Put or Delete is sent
	TraceWritten  = "written" // and returned
	TraceRefused  = "refused" // a fenced request was refused or cut short: the lease was lost or released
)

// TraceEvent describes one step of a lease's life, for tests that record a
// history of many processes and check it (test/jepsen).
type TraceEvent struct {
	Event string
	// Lease names the lease: its uniquely named key (the shared key, or
	// the exclusive holder's intent).
	Lease  string
	Shared bool
	// SafeEndIn is the time left until the lease's safe end when the event
	// happened (acquired, renewed).
	SafeEndIn time.Duration
	// Key is the store key of a write or a refused request.
	Key string
}

// trace reports ev to Options.Trace, if set.
func (l *Lock) trace(event, key string) {
	if l.opts.Trace == nil {
		return
	}
	l.mu.Lock()
	lease := l.keys[len(l.keys)-1].key
	l.mu.Unlock()
	l.opts.Trace(TraceEvent{Event: event, Lease: lease, Shared: l.Shared(), SafeEndIn: l.remaining(), Key: key})
}
