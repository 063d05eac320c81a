//go:build !darwin && !windows

package cli

import "errors"

// errNoScheduler: where cron (or systemd) would be the scheduler, neither
// is there.
var errNoScheduler = errors.New("no scheduler found: neither systemd runs this machine nor is crontab installed")
