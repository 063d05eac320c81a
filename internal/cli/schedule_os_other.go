//go:build !linux && !darwin && !windows

package cli

import "os/exec"

// defaultScheduler on the BSDs and others: cron.
func defaultScheduler() (kind, why string, err error) {
	if _, err := exec.LookPath("crontab"); err == nil {
		return "cron", "cron runs this machine", nil
	}
	return "", "", errNoScheduler
}
