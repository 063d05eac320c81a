//go:build linux

package lock

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// linuxProcesses reads /proc, and only while /proc is our pid namespace's
// (a container given the host's /proc would otherwise look at other
// processes under the same numbers).
type linuxProcesses struct{}

// platformProcesses is this platform's processes.
func platformProcesses() processes { return linuxProcesses{} }

func (linuxProcesses) self() (procID, bool) {
	pid := os.Getpid()
	if link, err := os.Readlink("/proc/self"); err != nil || link != strconv.Itoa(pid) {
		return procID{}, false
	}
	host, err1 := os.Hostname()
	boot, err2 := os.ReadFile("/proc/sys/kernel/random/boot_id")
	ns, err3 := os.Readlink("/proc/self/ns/pid")
	start, _, err4 := procStat(pid)
	if errors.Join(err1, err2, err3, err4) != nil || host == "" {
		return procID{}, false
	}
	return procID{Host: host, BootID: string(bytes.TrimSpace(boot)), PIDNS: ns, PID: pid, Start: start}, true
}

// state asks the kernel: kill(pid, 0) fails with ESRCH only when no such
// process exists (hidepid mounts of /proc do not affect it); a process
// that exists is p only if it started when p did, and is gone if it is a
// zombie (killed, not yet reaped).
func (linuxProcesses) state(p procID) procState {
	err := syscall.Kill(p.PID, 0)
	if errors.Is(err, syscall.ESRCH) {
		return procGone
	}
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return procUnknown
	}
	start, state, err := procStat(p.PID)
	switch {
	case err != nil:
		return procUnknown // e.g. hidden by hidepid: it exists, we cannot tell which
	case start != p.Start, state == 'Z', state == 'X':
		return procGone
	default:
		return procAlive
	}
}

// procStat reads pid's start time (clock ticks since boot) and state
// letter from /proc/PID/stat. The command name (field 2) may hold spaces
// and parentheses: the fields after it follow the last ')'.
func procStat(pid int) (start uint64, state byte, err error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, err
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	// After ")": state (field 3) ... starttime (field 22).
	fields := strings.Fields(string(data[i+1:]))
	if len(fields) < 20 || len(fields[0]) != 1 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(fields))
	}
	start, err = strconv.ParseUint(fields[19], 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("/proc/%d/stat: start time: %w", pid, err)
	}
	return start, fields[0][0], nil
}
