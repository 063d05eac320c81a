// Package jepsen checks histories recorded by cloudstic processes that ran
// against one repository under injected network faults (issue 23): every
// process appends events (lock acquired, lease renewed, write started and
// ended, lease lost, lock released, exit) stamped with this machine's
// monotonic clock to one history file, and Check finds what must never
// happen: an exclusive holding that overlaps any other holding, or a write
// started after its writer's lease ran out.
package jepsen
