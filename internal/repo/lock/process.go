package lock

import (
	"encoding/json"
)

// procID identifies the process that wrote a lock object, recorded in the
// payload's extra "process" field (Cloudstic readers ignore unknown
// fields) so that `locks` and `break-lock -stale-only` can tell a holder of
// this host whose process is gone at once instead of a TTL later. It is
// only ever compared within one pid namespace of one boot of one host:
// never across containers or machines.
type procID struct {
	Host string `json:"host"`
	// BootID names the boot: Linux's boot_id, Windows's kernel boot time
	// ("boot-time:N").
	BootID string `json:"boot_id"`
	// PIDNS names the pid namespace: Linux's "pid:[4026531836]", Windows's
	// session ("windows-session:1").
	PIDNS string `json:"pid_ns"`
	PID   int    `json:"pid"`
	// Start is the process's start time (Linux: clock ticks since boot;
	// Windows: creation time, 100 ns since 1601): a pid reused by a later
	// process has another.
	Start uint64 `json:"start"`
}

// procState is what this host can tell of a lock holder's process.
type procState int

const (
	// procUnknown: another host, container or boot, an unsupported
	// platform, or a payload without the field: judged as before (live
	// until stale).
	procUnknown procState = iota
	procAlive
	procGone
)

// processes is what the platform tells about its processes
// (process_linux.go, process_windows.go; elsewhere nothing:
// process_other.go).
type processes interface {
	// self identifies this process; ok is false when the platform cannot.
	self() (p procID, ok bool)
	// state tells whether the process p of our pid namespace still runs.
	state(p procID) procState
}

// judgeProcess tells whether the holder recorded as p (nil when the
// payload has none) is a process of this host, in our pid namespace, that
// no longer exists. self is this process as ps saw it (ok false: nothing
// can be judged).
func judgeProcess(ps processes, self procID, ok bool, p *procID) procState {
	if !ok || p == nil || p.PID <= 0 || p.Host != self.Host || p.BootID != self.BootID || p.PIDNS != self.PIDNS {
		return procUnknown
	}
	return ps.state(*p)
}

// decodeProc parses the payload's "process" field; anything malformed is
// treated as absent (the field is an extra: it never makes a lock bad).
func decodeProc(raw json.RawMessage) *procID {
	if len(raw) == 0 {
		return nil
	}
	var p procID
	if err := json.Unmarshal(raw, &p); err != nil || p.Host == "" || p.BootID == "" || p.PIDNS == "" || p.PID <= 0 {
		return nil
	}
	return &p
}

// observer judges the holders of lock objects read by one acquire, List
// or Break.
type observer struct {
	ps   processes
	self procID
	ok   bool
}

func newObserver(ps processes) observer {
	self, ok := ps.self()
	return observer{ps: ps, self: self, ok: ok}
}

// gone reports whether p's holder process is known to be gone.
func (o observer) gone(p payload) bool {
	return o.ps != nil && judgeProcess(o.ps, o.self, o.ok, p.Process) == procGone
}
