package tty

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// TestStatsGrowthSparkline checks that stats -growth draws its ASCII
// sparkline on a terminal (the e2e tests check it does not in a pipe), and
// that dump refuses to write an archive to a terminal.
func TestStatsGrowthSparkline(t *testing.T) {
	dir := t.TempDir()
	s := newSession(t, dir)
	bin := buildBinary(t, dir)
	src := filepath.Join(dir, "src")
	s.waitFor(regexp.MustCompile(`(?m)^\$`))
	env := "CLOUDSTIC_PASSWORD=pw CLOUDSTIC_STORE=local:" + filepath.Join(dir, "repo") + " "
	s.typeLine(env + bin + " init -quiet; echo init=$?")
	s.waitFor(regexp.MustCompile(`init=0`))
	for i := range 4 {
		writeData(t, filepath.Join(src, strconv.Itoa(i)), i+1, 100<<10)
		s.typeLine("clear; " + env + bin + " backup -quiet -source local:" + src + "; echo backup" + strconv.Itoa(i) + "=$?")
		s.waitFor(regexp.MustCompile(`backup` + strconv.Itoa(i) + `=0`))
	}
	s.typeLine("clear; " + env + bin + " stats -growth")
	line := s.waitFor(regexp.MustCompile(`repository size [_.\-=+*#@]{4}  \S+ KiB to \S+ (KiB|MiB)`))
	if want := "repository size _-+@"; line[:len(want)] != want {
		t.Errorf("sparkline %q, want it to start %q (sizes 1, 3, 6, 10 x 100 KiB on 8 levels)", line, want)
	}
	s.typeLine("clear; " + env + bin + " dump latest / ; echo dump=$?")
	s.waitFor(regexp.MustCompile(`will not write a tar archive to a terminal`))
	s.waitFor(regexp.MustCompile(`dump=2`))
	if err := os.RemoveAll(src); err != nil {
		t.Fatal(err)
	}
}
