package cli

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/windows"
)

// queryUnbiasedInterruptTime is kernel32's QueryUnbiasedInterruptTime,
// which golang.org/x/sys/windows does not wrap.
var queryUnbiasedInterruptTime = windows.NewLazySystemDLL("kernel32.dll").NewProc("QueryUnbiasedInterruptTime")

// monoNanos is the system's monotonic clock (the interrupt time, in 100 ns
// ticks), which every process of the machine shares: the history's lines
// of several processes are ordered by it.
func monoNanos() int64 {
	var ticks uint64
	if ok, _, err := queryUnbiasedInterruptTime.Call(uintptr(unsafe.Pointer(&ticks))); ok == 0 {
		panic(fmt.Sprintf("QueryUnbiasedInterruptTime: %v", err)) // cannot fail since Windows 7
	}
	return int64(ticks) * 100 //nolint:gosec // centuries away from overflowing
}
