// Package operation opens repositories and runs their operations under
// the lock the seed assigns to each, so that every caller (the command line
// today; mount, copy or a web dashboard tomorrow) opens, unlocks and locks
// the same way and none can write without its lock.
//
// Open (OpenKeyring for the key commands) is the one way in: it opens the
// store a URI names, reads the config, asks the caller's credential source
// only for an encrypted repository, unlocks it and sets up the metadata
// cache. The caller keeps prompting and reading secrets; it passes values
// and functions down, never the other way. The operations run on the
// opened Repo (or Keyring) and take their own lock:
//
//	backup            shared (none with DryRun)
//	restore           shared, always (a prune must not delete what it reads)
//	prune             exclusive (none with DryRun)
//	forget            none; with a prune step, exclusive for that step
//	tag               shared (none with DryRun)
//	rewrite           shared (none with DryRun)
//	copy              shared on the source and the destination (none with DryRun)
//	key passwd/remove exclusive (two removals at once could delete the last key)
//	repair snapshots  none (as forget: it only deletes damaged snapshot objects)
//	repair index      exclusive (none with DryRun)
//	repair config     exclusive (it rewrites the config, a mutable key)
//	init, key add     none (a new config, a new uniquely named key slot)
//	find, dump, stats shared, named by the caller (Find, Dump, Stats, Growth)
//	ls, diff          none (List, Diff with NoLock; the dashboard's pages: shared)
//	mount             shared, named "mount" (Mount)
//	cat config        none (CatConfig: a plain object, read on a store)
//	key list          none (ListKeys: plain objects, read on a store)
//
// The read operations (read.go, search.go: List, Lookup, Browse, Dump,
// Find, Diff, Stats, Growth) take the ReadLock their caller names: the
// command line gives each command its lock of the table, the dashboard a
// shared lock for every page that reads snapshot contents.
//
// Sources that need more than a path are opened here too: OpenCloudDrive
// (a Google Drive or OneDrive source, signed in with a CloudLogin whose
// token the caller keeps through Load and Save), CloudSignIn (the OAuth
// browser or device flow) and CloudAccount.
//
// The README's command table says the same per command;
// internal/cli's TestLocksAsDocumented holds them to it.
//
// Each function validates its options, takes the lock, loads what the
// engine needs, runs the engine entry point with a writer made from the
// lease, and releases the lock also on error or cancellation. A write
// needs a lease by type: repo.Repository only reads, and the engine writes
// only through the repo.Writer or repo.ExclusiveWriter (repo.KeyringWriter
// for the keyring) that a lease of the right kind gives, every request of
// which goes through the lease's fence; a dry run gets the read-only
// repository. Repo and Keyring hand front ends a reader, never a store or
// a writer. The commands the table above runs with no lock write through
// unlocked.go, the one way to repo's WithoutLock (TestWritesNeedAWriter
// and forbidigo in .golangci.yml hold all this).
package operation
