// Package winpath holds the Windows path forms that packages calling the
// Win32 API directly (the local store, fsmeta's security descriptors) need
// and the os package keeps to itself. It imports nothing of the project,
// so any layer may use it.
package winpath
