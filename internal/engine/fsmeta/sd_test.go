package fsmeta

import "testing"

// TestSDDLParts: the sections of an SDDL string are found by their tags
// outside the ACEs, whatever the ACEs and SIDs hold.
func TestSDDLParts(t *testing.T) {
	tests := []struct {
		sddl string
		want uint32
	}{
		{"", 0},
		{"D:P(A;;FA;;;WD)", sdDACL},
		{"O:BAG:SYD:PAI(A;OICI;FA;;;SY)", sdOwner | sdGroup | sdDACL},
		{"O:S-1-5-21-1-2-3-1001G:S-1-5-21-1-2-3-513D:(A;;FA;;;S-1-5-21-1-2-3-1001)", sdOwner | sdGroup | sdDACL},
		// DA and DU are SIDs (domain admins, users), not DACLs.
		{"O:DAG:DU", sdOwner | sdGroup},
		{"O:SYG:SYD:(A;;FA;;;SY)S:(AU;SAFA;FA;;;WD)", sdOwner | sdGroup | sdDACL | sdSACL},
		{"S:(ML;;NW;;;LW)", sdSACL},
		// A conditional ACE: its text (quoted or not) names no section.
		{`D:(XA;;FX;;;S-1-1-0;(@User.Title=="PM:G:" && (@User.Division=="S:ales")))`, sdDACL},
		{"G:BA", sdGroup},
	}
	for _, tt := range tests {
		t.Run(tt.sddl, func(t *testing.T) {
			if got := sddlParts(tt.sddl); got != tt.want {
				t.Errorf("sddlParts = %#x, want %#x", got, tt.want)
			}
		})
	}
}

// TestRestoredParts: a restore sets the DACL always, the owner and group
// with owners' rights only, the SACL with its own right only, and
// nothing the SDDL does not hold.
func TestRestoredParts(t *testing.T) {
	all := sdOwner | sdGroup | sdDACL | sdSACL
	tests := []struct {
		name   string
		parts  uint32
		rights sdRights
		want   uint32
	}{
		{"no rights", all, sdRights{}, sdDACL},
		{"owners", all, sdRights{owners: true}, sdOwner | sdGroup | sdDACL},
		{"sacl", all, sdRights{sacl: true}, sdDACL | sdSACL},
		{"every right", all, sdRights{owners: true, sacl: true}, all},
		{"owner only", sdOwner, sdRights{}, 0},
		{"no DACL", sdOwner | sdGroup, sdRights{owners: true}, sdOwner | sdGroup},
		{"nothing", 0, sdRights{owners: true, sacl: true}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := restoredParts(tt.parts, tt.rights); got != tt.want {
				t.Errorf("restoredParts = %#x, want %#x", got, tt.want)
			}
		})
	}
}
