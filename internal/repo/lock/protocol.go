package lock

import "github.com/cloudstic/cloudstic/internal/store"

// Protocol names, for a store's declared capabilities, how the exclusive
// key is claimed and why (the intents run on every store; docs/lock.md
// "Per store"). The CLI prints it with -debug.
func Protocol(caps store.Capabilities) string {
	switch {
	case caps.CreateIfAbsent && caps.CompareAndSwap:
		return "intents + create-if-absent + compare-and-swap (store has both conditional writes)"
	case caps.CreateIfAbsent:
		return "intents + create-if-absent (store has no compare-and-swap: keys are compared by content)"
	default:
		return "intents only (store has no create-if-absent: mutual exclusion rests on the intents)"
	}
}
