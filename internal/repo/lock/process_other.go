//go:build !linux && !windows

package lock

// noProcesses: this platform records no process identity, so no holder is
// ever judged gone (locks show them live until stale, as before).
type noProcesses struct{}

// platformProcesses is this platform's processes.
func platformProcesses() processes { return noProcesses{} }

func (noProcesses) self() (procID, bool)   { return procID{}, false }
func (noProcesses) state(procID) procState { return procUnknown }
