//go:build !linux

package offheap

// AdviseHugePages does nothing: transparent huge pages are Linux's (macOS
// and FreeBSD promote pages on their own; Windows's large pages need a
// privilege and are never paged out).
func AdviseHugePages([]byte) {}
