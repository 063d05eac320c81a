// Package forget removes snapshots: those named by id, or those a retention
// policy (keep the last N, the newest per hour, day, week, month, year) does
// not keep, evaluated per group of snapshots (by default the same source,
// host and path). Policy evaluation is pure (Apply, Plan); Run deletes the
// snapshot objects, which is forget's only write. Forget takes no lock: a
// snapshot object is immutable and deleting one never harms another.
// Reclaiming the space the removed snapshots used is prune's job.
package forget
