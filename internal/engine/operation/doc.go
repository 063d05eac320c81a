// Package operation runs the repository's operations under the lock the
// seed assigns to each, so that no caller (the command line today; mount,
// copy or a web dashboard tomorrow) can write without it:
//
//	backup            shared (none with DryRun)
//	restore           shared, always (a prune must not delete what it reads)
//	prune             exclusive (none with DryRun)
//	forget            none; with a prune step, exclusive for that step
//	key passwd/remove exclusive (two removals at once could delete the last key)
//
// Each function validates its options, takes the lock, loads what the
// engine needs, runs the engine entry point with the lease, and releases the
// lock also on error or cancellation. The engine's writing entry points
// (backup.Run, restore.Run, prune.Run, repo.Keyring's removals) refuse to run
// without a lease of the right kind, which only package lock can make.
package operation
