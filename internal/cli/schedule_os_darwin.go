package cli

// defaultScheduler on macOS: launchd, which runs the Mac (cron there is
// a launchd job itself, and Apple deprecates it).
func defaultScheduler() (kind, why string, err error) {
	return "launchd", "launchd runs macOS; give -scheduler cron for a crontab entry", nil
}
