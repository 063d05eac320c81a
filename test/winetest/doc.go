// Package winetest holds what tests need to run on Windows, for real or
// under Wine 8 (Debian 12's), which scripts/test.sh runs the Windows tests
// under.
//
// SkipWithoutSymlinks skips a test that makes symbolic links where none
// can be made: Wine 8's CreateSymbolicLink succeeds and creates nothing,
// and Windows refuses them without Developer Mode or elevation.
//
// The rest adapts the Go runtime of a Windows test binary to Wine 8. Test
// packages import this package for that side effect from a file built
// only with the winetest tag (wine_windows_test.go), and the Wine run
// builds them with -tags winetest -ldflags=-checklinkname=0; no other
// build sees it.
//
// What it changes: os.RemoveAll (and so t.TempDir's cleanup) and os.Root's
// Remove delete through FileDispositionInformationEx, which Wine 8 answers
// with STATUS_NOT_IMPLEMENTED rather than one of the statuses Go falls
// back on; winetest sets Go's own switch to its fallback (the
// FileDispositionInformation of older Windows versions), which Wine has.
package winetest
