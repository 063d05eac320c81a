package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
)

// historyEnv names a file to which the process appends the history of its
// leases, for the network-fault tests (test/jepsen; docs/testing.md). It is
// a test-only hook, like fault.EnvVar.
const historyEnv = "CLOUDSTIC_TEST_HISTORY"

// history appends one JSON line per lease event, in the format test/jepsen
// reads, stamped with the machine's monotonic clock (CLOCK_MONOTONIC, the
// same for every process on this machine).
type history struct {
	mu   sync.Mutex
	f    *os.File
	proc string
}

// historyLine is one event; its field names are test/jepsen's Event.
type historyLine struct {
	Proc    string `json:"proc"`
	Mono    int64  `json:"mono"`
	Event   string `json:"event"`
	Lease   string `json:"lease,omitempty"`
	Kind    string `json:"kind,omitempty"`
	SafeEnd int64  `json:"safe_end,omitempty"`
	Key     string `json:"key,omitempty"`
	Code    int    `json:"code,omitempty"`
	Msg     string `json:"msg,omitempty"`
}

// openHistory opens the history file at path for this process, which
// runs command: the process is named by host, pid and command, so that a
// violation the checker finds says what ran.
func openHistory(path, command string) (*history, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", historyEnv, err)
	}
	host, _ := os.Hostname() // a name for humans only
	return &history{f: f, proc: host + "/" + strconv.Itoa(os.Getpid()) + " " + command}, nil
}

// lease records a lock's event (operation.LockOptions.Trace).
func (h *history) lease(ev operation.LockTraceEvent) {
	now := monoNanos()
	line := historyLine{Proc: h.proc, Mono: now, Event: ev.Event, Lease: ev.Lease, Key: ev.Key}
	if ev.Event == operation.TraceAcquired || ev.Event == operation.TraceRenewed {
		line.SafeEnd = now + ev.SafeEndIn.Nanoseconds()
		line.Kind = "exclusive"
		if ev.Shared {
			line.Kind = "shared"
		}
	}
	h.write(line)
}

// exit records the process's end and closes the file.
func (h *history) exit(code int, msg string) {
	h.write(historyLine{Proc: h.proc, Mono: monoNanos(), Event: "exit", Code: code, Msg: msg})
	h.mu.Lock()
	defer h.mu.Unlock()
	_ = h.f.Close() // a test hook: a lost line shows in the checker's report
}

func (h *history) write(line historyLine) {
	data, err := json.Marshal(line)
	if err != nil {
		panic(fmt.Sprintf("history: %v", err)) // strings and numbers always marshal
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	// One write per line on an O_APPEND file: lines of concurrent
	// processes never interleave.
	_, _ = h.f.Write(append(data, '\n')) // a test hook: see exit
}
