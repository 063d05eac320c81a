//go:build unix

package backup_test

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// changeTime is path's ctime.
func changeTime(t *testing.T, path string) time.Time {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return time.Unix(st.Ctim.Unix())
}
