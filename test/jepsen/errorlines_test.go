//go:build unix

package jepsen

import "strings"

// errorLines counts the lines of stderr that are not warnings: a failed
// command ends with exactly one error line, after any "warning: " lines
// it printed on the way (a restore names each file a fault kept it from
// writing, then fails).
func errorLines(stderr string) int {
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if line != "" && !strings.HasPrefix(line, "warning: ") {
			n++
		}
	}
	return n
}
