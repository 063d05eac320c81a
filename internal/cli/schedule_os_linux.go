package cli

import (
	"os"
	"os/exec"
)

// defaultScheduler on Linux: systemd timers when systemd runs the
// machine, else cron.
func defaultScheduler() (kind, why string, err error) {
	if fi, err := os.Stat("/run/systemd/system"); err == nil && fi.IsDir() {
		return "systemd", "systemd runs this machine; give -scheduler cron for a crontab entry", nil
	}
	if _, err := exec.LookPath("crontab"); err == nil {
		return "cron", "systemd does not run this machine; give -scheduler systemd to write units anyway", nil
	}
	return "", "", errNoScheduler
}
