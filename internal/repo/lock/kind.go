package lock

import "strings"

// Kind names a lock object's kind by its key: "exclusive", "intent" (the
// exclusive lock's announcement, see docs/lock.md) or "shared", as `locks`
// and the dashboard's lock panel show it.
func (i Info) Kind() string {
	switch {
	case i.Key == ExclusiveKey:
		return "exclusive"
	case strings.HasPrefix(i.Key, IntentPrefix):
		return "intent"
	default:
		return "shared"
	}
}
