// Package wine holds the end-to-end test of the Windows binary under Wine:
// scripts/ports.sh's wine step builds cloudstic.exe, names it in
// CLOUDSTIC_WINE_EXE and runs this package's Windows test binary (built
// with -tags winetest) under Wine, which runs the executable as Windows
// would, on Windows paths. No other build has a test here.
package wine
