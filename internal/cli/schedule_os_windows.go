package cli

// defaultScheduler on Windows: Task Scheduler, its only scheduler.
func defaultScheduler() (kind, why string, err error) {
	return "schtasks", "Task Scheduler runs Windows", nil
}
