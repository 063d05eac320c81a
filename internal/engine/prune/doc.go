// Package prune reclaims the space of blobs no snapshot references.
//
// Run marks every blob reachable from every snapshot, then sweeps: packs
// holding no used blob are deleted, packs whose unused share exceeds
// Options.MaxUnused are repacked (their used blobs are saved into new packs,
// which get their own index file), the surviving packs are written into a
// merged index, and only then are the index files read and, last, old
// packs deleted. With nothing to delete, repack or drop, the index files
// are merged only when a pack is listed twice or the merge leaves fewer
// files: an index an earlier prune merged stays as it is (rewriting it
// would make every host rebuild its on-disk index). A crash at any point leaves every snapshot's blobs
// reachable through some index file and pack on the store, and no index
// entry pointing at a deleted pack.
//
// # What prune may delete
//
// Prune runs under the exclusive lock (its lease, required), so no backup holds
// a valid lease while it runs. A backup stores its packs first, then the
// index files naming them, then its snapshot, all under its shared lock,
// and stops writing when it loses its lease (its work's context ends
// before the lease can run out). So:
//
//   - A pack an index file names but no snapshot uses is dead, whatever its
//     age: the backup that wrote it either finished (its snapshot would
//     use it) or lost its lease and will write no snapshot; a backup that
//     could deduplicate against it would need a shared lock. Prune deletes
//     or repacks such packs at once, and supersedes every index file it
//     read by the merged index.
//   - A pack no index file names is a leftover of a writer that crashed or
//     lost its lease between storing the pack and indexing it, or one
//     still writing without a valid lock (broken by break-lock, a host
//     asleep past its lease, a store whose lock is weaker than the model).
//     Prune deletes it once the store wrote it more than Options.Margin
//     before the start of the run, and reports the others in Result.Kept.
//
// # Unindexed packs: why a short margin is safe
//
// Write s for prune's start (the store's time as its lock estimates it,
// never ahead of the store's clock), and, for any other holder, M for the
// store's time of its last lock write. The lock's lease rule (docs/lock.md,
// "Time") is that a holder's writes, those sent just before its safe end
// and landing late included, all land before M + R + TTL (R = 1 s, the
// resolution of store times): its lease ends TTL - SafetyMargin after the
// write was sent, and SafetyMargin exceeds two requests in flight plus
// MaxClockSkew. Others judge its key stale only after that time.
//
//  1. Under the lock no margin is needed: prune's acquire found every other
//     key absent (released after its work ended, never written, or
//     removed by break-lock -stale-only as its holder's process is gone)
//     or stale, and everything a stale key's holder sent landed before prune
//     began, so the index files prune lists afterwards include every one
//     that will ever name a pack of theirs; no new holder starts while
//     prune holds the lock.
//  2. DefaultMargin, TTL + SafetyMargin + MaxClockSkew (95 s), keeps more
//     than the lease rule needs. A pack deleted was stored at m < s -
//     DefaultMargin. If its writer has not written its key since (it
//     crashed, hung, or was cut off: every orphan's case), M <= m, and the
//     writer's last write, an index file naming the pack included, landed
//     before m + R + TTL < s - (SafetyMargin - R) - MaxClockSkew: the
//     rule holds with a further SafetyMargin - R of room for a late
//     request and MaxClockSkew for an error in s. A writer that wrote its
//     key after storing the pack and was still not live at prune's acquire
//     is case 1 (stale) or had its lock removed by break-lock while it ran.
//  3. That last case is outside the lock, and no margin on a pack's age
//     covers it (the former 1 h did not either: a backup indexes a stored
//     pack when it stores the next one or is interrupted, so a slow
//     backup can hold an unindexed pack for longer than any margin). What
//     guards it is below: the re-list before the first delete, and the
//     broken holder losing its lease at its next refresh.
//
// So the orphans of a crashed backup go in the first prune that can take
// the lock (its key is stale a TTL after its last refresh, or removed at
// once as dead on its own host, where the margin covers a request the dead
// process left on the wire) once they are DefaultMargin old; a younger one is kept, reported, and goes next time.
// A dry run holds no lock, so it reports what a prune run now would do
// were the lock free, by the local clock.
//
// Defence in depth against a failed lock: prune checks its lease before
// every batch of deletes, and before the first one re-lists snapshots and index
// files: a snapshot, or an index file it did not write, that appeared
// since the mark phase stops the run with nothing deleted.
package prune
