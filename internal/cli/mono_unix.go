//go:build unix

package cli

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// monoNanos is the system's monotonic clock (CLOCK_MONOTONIC), which every
// process of the machine shares: the history's lines of several processes
// are ordered by it.
func monoNanos() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic(fmt.Sprintf("CLOCK_MONOTONIC: %v", err)) // cannot fail on a supported system
	}
	return ts.Nano()
}
