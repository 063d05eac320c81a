//go:build windows

package lock

import (
	"errors"
	"os"
	"strconv"
	"unsafe"

	"golang.org/x/sys/windows"
)

// windowsProcesses asks the kernel through OpenProcess. A false "gone"
// would let break-lock -stale-only remove a live holder's lock, so every
// doubt is procUnknown; what makes each answer safe:
//
//   - Host and boot: the boot id is the kernel's boot time (see bootID),
//     the same for every process of one boot. Two boots of one machine
//     that happened to share it are harmless: no process of the earlier
//     boot runs any more, so whatever is judged of it is not a live
//     holder.
//   - Pid space: one Windows kernel numbers all its processes, whatever
//     their session, with pids that are never reused while the process
//     object exists. A Windows container (a server silo) is not meant to
//     open processes outside it: one of the host or of another container
//     could look gone from inside (not verified on a container host, so
//     assumed). Its processes run in sessions of their own (the silo has
//     its own service session), so pid_ns names our session
//     ("windows-session:N") and only holders of our session are judged;
//     and a process that knows it is in a server silo records and judges
//     nothing (self is not ok), as Linux does when /proc is not its pid
//     namespace's. The price: a holder in another session (a scheduled
//     task in session 0, judged from a desktop session) is shown live
//     until its lock is stale, as before.
//   - Start: the process creation time (GetProcessTimes, 100-ns units
//     since 1601), fixed for the life of the process object: a pid reused
//     by a later process has another.
type windowsProcesses struct{}

// platformProcesses is this platform's processes.
func platformProcesses() processes { return windowsProcesses{} }

func (windowsProcesses) self() (procID, bool) {
	host, err := os.Hostname()
	if err != nil || host == "" {
		return procID{}, false
	}
	boot, ok := bootID()
	if !ok || inServerSilo() {
		return procID{}, false
	}
	var session uint32
	pid := windows.GetCurrentProcessId()
	if windows.ProcessIdToSessionId(pid, &session) != nil {
		return procID{}, false
	}
	start, err := creationTime(windows.CurrentProcess())
	if err != nil {
		return procID{}, false
	}
	return procID{Host: host, BootID: boot, PIDNS: sessionNS(session), PID: int(pid), Start: start}, true
}

// sessionNS is pid_ns for the session id s.
func sessionNS(s uint32) string { return "windows-session:" + strconv.FormatUint(uint64(s), 10) }

// state opens p.PID for PROCESS_QUERY_LIMITED_INFORMATION (the least
// access, granted even for most processes of other users). Only
// ERROR_INVALID_PARAMETER, which OpenProcess answers for a pid no process
// has (and for pid 0, excluded before), says gone; access denied or any
// other failure is procUnknown. A process that opens is p only if it was
// created when p was; it is gone if it has exited and only a handle keeps
// its object (GetExitCodeProcess: not STILL_ACTIVE). A process that
// exited with code 259, STILL_ACTIVE's value, looks alive: the safe way.
func (windowsProcesses) state(p procID) procState {
	if p.PID <= 0 || uint64(p.PID) > 0xFFFFFFFF {
		return procUnknown
	}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(p.PID))
	if errors.Is(err, windows.ERROR_INVALID_PARAMETER) {
		return procGone
	}
	if err != nil {
		return procUnknown
	}
	defer func() { _ = windows.CloseHandle(h) }()
	start, err := creationTime(h)
	if err != nil {
		return procUnknown
	}
	if start != p.Start {
		return procGone
	}
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil {
		return procUnknown
	}
	if code != stillActive {
		return procGone
	}
	return procAlive
}

// stillActive is STILL_ACTIVE: GetExitCodeProcess's code for a process
// that has not exited.
const stillActive = 259

// creationTime is the creation time of the process h, in 100-ns units
// since 1601 (a FILETIME).
func creationTime(h windows.Handle) (uint64, error) {
	var created, exited, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(h, &created, &exited, &kernel, &user); err != nil {
		return 0, err
	}
	t := uint64(created.HighDateTime)<<32 | uint64(created.LowDateTime)
	if t == 0 {
		return 0, errors.New("process creation time 0")
	}
	return t, nil
}

// timeOfDay is SYSTEM_TIMEOFDAY_INFORMATION, what
// NtQuerySystemInformation(SystemTimeOfDayInformation) gives.
type timeOfDay struct {
	BootTime      int64
	CurrentTime   int64
	TimeZoneBias  int64
	TimeZoneID    uint32
	Reserved      uint32
	BootTimeBias  uint64
	SleepTimeBias uint64
}

// bootID names this boot by the time the kernel booted, in 100-ns units
// since 1601. The kernel keeps its boot time (KeBootTime) as a variable,
// not derived from a clock at each call, so every process of one boot
// reads the same value; when the system time is set, the kernel moves it
// by the change and adds the change to BootTimeBias, so the difference is
// the boot time as first recorded. (A boot time computed as now minus the
// interrupt time or GetTickCount64 wanders by milliseconds between
// calls.) If the two are ever read torn by a concurrent change of the
// time, processes disagree and judge each other unknown: the safe way.
// Under Wine it is the wineserver's start, which is also when its pid
// space began.
func bootID() (string, bool) {
	var tod timeOfDay
	var n uint32
	err := windows.NtQuerySystemInformation(windows.SystemTimeOfDayInformation, unsafe.Pointer(&tod), uint32(unsafe.Sizeof(tod)), &n)
	boot := tod.BootTime - int64(tod.BootTimeBias)
	if err != nil || n < 8 || boot <= 0 {
		return "", false
	}
	return "boot-time:" + strconv.FormatInt(boot, 10), true
}

// jobObjectSiloBasicInformation is JobObjectSiloBasicInformation (36),
// whose answer is siloBasic (SILOOBJECT_BASIC_INFORMATION, Windows 10
// 1607 and later).
const jobObjectSiloBasicInformation = 36

type siloBasic struct {
	SiloID            uint32
	SiloParentID      uint32
	NumberOfProcesses uint32
	IsInServerSilo    bool
	Reserved          [3]byte
}

// queryInformationJobObject is kernel32's QueryInformationJobObject,
// called through LazyProc.Call, whose arguments keep what they point to
// alive and in place (x/sys's wrapper takes the buffer as a bare uintptr).
var queryInformationJobObject = windows.NewLazySystemDLL("kernel32.dll").NewProc("QueryInformationJobObject")

// inServerSilo reports whether the job of this process (a nil handle
// names it) says it is in a server silo, a Windows container. A failed
// query (no job, a job that is no silo, an older Windows) says no: the
// session in pid_ns still keeps a container's processes apart.
func inServerSilo() bool {
	if queryInformationJobObject.Find() != nil {
		return false
	}
	info := new(siloBasic)
	var n uint32
	r, _, _ := queryInformationJobObject.Call(0, jobObjectSiloBasicInformation,
		uintptr(unsafe.Pointer(info)), unsafe.Sizeof(*info), uintptr(unsafe.Pointer(&n)))
	return r != 0 && info.IsInServerSilo
}
