package backup_test

import (
	"testing"
	"time"
)

// changeTime is the zero time: a backup on Windows records no change time.
func changeTime(*testing.T, string) time.Time { return time.Time{} }
