package fsmeta

import "fmt"

// hostNameError refuses a name Windows cannot hold as it is (see
// WindowsName).
func hostNameError(name string) error {
	if windowsNeedsMapping(name) {
		return fmt.Errorf("%w: %q is no Windows file name", ErrUnsafeName, name)
	}
	return nil
}

// LocalName is the name a snapshot's name is restored under here: on
// Windows, WindowsName's mapping of a name Windows cannot hold (changed is
// then true), else the name itself.
func LocalName(name string) (local string, changed bool) { return WindowsName(name) }
