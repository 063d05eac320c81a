package fsmeta

import "sync/atomic"

// PrivilegeCounts counts entries that give privileges to whoever runs or
// opens them: regular files with a setuid or setgid bit, device nodes
// (raw access to a disk or a terminal), and security.capability
// attributes.
type PrivilegeCounts struct {
	SetuidFiles, DeviceNodes, Capabilities int64
}

// Any says whether any is counted.
func (c PrivilegeCounts) Any() bool { return c.SetuidFiles+c.DeviceNodes+c.Capabilities > 0 }

// Privileges is what a Writer gave (Restored: the bits set, the nodes
// created, the attributes set) and what its options withheld.
type Privileges struct {
	Restored, Withheld PrivilegeCounts
}

// privilegeCounters are a Writer's live counts.
type privilegeCounters struct {
	setuid, devices, caps                         atomic.Int64
	setuidWithheld, devicesWithheld, capsWithheld atomic.Int64
}

// Privileges returns the counts so far.
func (w *Writer) Privileges() Privileges {
	c := &w.priv
	return Privileges{
		Restored: PrivilegeCounts{SetuidFiles: c.setuid.Load(), DeviceNodes: c.devices.Load(), Capabilities: c.caps.Load()},
		Withheld: PrivilegeCounts{SetuidFiles: c.setuidWithheld.Load(), DeviceNodes: c.devicesWithheld.Load(), Capabilities: c.capsWithheld.Load()},
	}
}
