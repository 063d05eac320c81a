//go:build unix

package exclude

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// names are the entry names of generated trees: plain names, names the
// patterns' wildcards, classes and escapes must tell apart, and names with
// spaces, "#" and "!".
var names = []string{"a", "b", "ab", "c.log", "d.txt", "x.log", ".cache", "node_modules", "build", "output",
	"cache", "a b", "#h", "!n", "e.tmp", "foo", "bar", "t "}

// patternParts build generated patterns.
var patternParts = []string{"a", "b", "ab", "*.log", "*", "?", "**", "[a-c]", "[!a]*", "[^b]", "build", "output",
	"cache", ".cache", ".c*", "node_modules", "\\#h", "\\!n", "a\\ b", "e.*", "*o*", "f?o", "a**", "t\\ ", "x.log",
	"[a-c]*", "*.txt", "a?", "[ab]b", "*\\*", "b**", "**b", "\\a", "[\\!]n", "output/**/x.log"}

// randomPattern makes one gitignore line.
func randomPattern(rng *rand.Rand) string {
	var b strings.Builder
	if rng.IntN(5) == 0 {
		b.WriteString("!")
	}
	switch rng.IntN(6) {
	case 0:
		b.WriteString("/")
	case 1:
		b.WriteString("**/")
	}
	n := 1 + rng.IntN(3)
	if rng.IntN(2) == 0 {
		n = 1
	}
	for i := range n {
		if i > 0 {
			b.WriteString("/")
		}
		b.WriteString(patternParts[rng.IntN(len(patternParts))])
	}
	switch rng.IntN(7) {
	case 0, 1:
		b.WriteString("/")
	case 2:
		b.WriteString("/**")
	case 3:
		b.WriteString("  ") // trailing spaces, dropped
	}
	return b.String()
}

// makeTree creates a random tree below root and returns its paths,
// relative and "/" separated.
func makeTree(t *testing.T, rng *rand.Rand, root string) []string {
	var paths []string
	var fill func(dir, rel string, depth int)
	fill = func(dir, rel string, depth int) {
		n := 2 + rng.IntN(4)
		for _, i := range rng.Perm(len(names))[:n] {
			name := names[i]
			r := name
			if rel != "" {
				r = rel + "/" + name
			}
			p := filepath.Join(dir, name)
			paths = append(paths, r)
			switch k := rng.IntN(10); {
			case depth < 3 && k < 5:
				if err := os.Mkdir(p, 0o755); err != nil {
					t.Fatal(err)
				}
				fill(p, r, depth+1)
			case k == 5:
				if err := os.Symlink(".", p); err != nil { // a link to a directory is not one
					t.Fatal(err)
				}
			default:
				if err := os.WriteFile(p, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	fill(root, "", 0)
	return paths
}

// walkExcluded is the walk's rule: an entry is excluded when the matcher
// excludes it or any directory above it.
func walkExcluded(m *Matcher, root string, paths []string) map[string]bool {
	out := map[string]bool{}
	for _, rel := range paths { // parents come before their entries
		if i := strings.LastIndexByte(rel, '/'); i >= 0 && out[rel[:i]] {
			out[rel] = true
			continue
		}
		fi, err := os.Lstat(filepath.Join(root, rel))
		out[rel] = err == nil && m.Match(rel, fi.IsDir())
	}
	return out
}

// gitExcluded asks git check-ignore which paths the patterns exclude.
func gitExcluded(t *testing.T, root string, paths []string) map[string]bool {
	var in bytes.Buffer
	for _, p := range paths {
		in.WriteString(p + "\x00")
	}
	cmd := exec.Command("git", "-C", root, "check-ignore", "--no-index", "--stdin", "-z")
	cmd.Stdin = &in
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
		err = nil // nothing ignored
	}
	if err != nil {
		t.Fatalf("git check-ignore: %v", err)
	}
	res := map[string]bool{}
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			res[p] = true
		}
	}
	return res
}

// TestDifferentialGit compares the matcher, applied as the walk applies it,
// with git check-ignore on generated trees and pattern lists.
func TestDifferentialGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed as the oracle of gitignore syntax")
	}
	trees, listsPerTree := 14, 14
	seed := uint64(2026)
	if s := os.Getenv("EXCLUDE_DIFF_SEED"); s != "" { // to explore more trees by hand
		if _, err := fmt.Sscan(s, &seed); err != nil {
			t.Fatalf("EXCLUDE_DIFF_SEED=%q: %v", s, err)
		}
		trees, listsPerTree = 100, 20
	}
	rng := rand.New(rand.NewPCG(16, seed))
	cases, disagreements := 0, 0
	for range trees {
		root := t.TempDir()
		if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v: %s", err, out)
		}
		paths := makeTree(t, rng, root)
		for range listsPerTree {
			lines := []string{"# generated", ""}
			for range 1 + rng.IntN(5) {
				lines = append(lines, randomPattern(rng))
			}
			file := strings.Join(lines, "\n") + "\n"
			if err := os.WriteFile(filepath.Join(root, ".git", "info", "exclude"), []byte(file), 0o644); err != nil {
				t.Fatal(err)
			}
			m, err := NewMatcher(lines)
			if err != nil {
				t.Fatalf("patterns %q: %v", lines, err)
			}
			got, want := walkExcluded(m, root, paths), gitExcluded(t, root, paths)
			for _, p := range paths {
				cases++
				if got[p] != want[p] {
					disagreements++
					if disagreements <= 10 {
						t.Errorf("%q with patterns %q: excluded %v, git says %v", p, lines[2:], got[p], want[p])
					}
				}
			}
		}
	}
	if cases < 5000 {
		t.Errorf("only %d cases compared, want at least 5,000", cases)
	}
	if disagreements > 0 {
		t.Errorf("%d disagreements with git over %d cases", disagreements, cases)
	}
	t.Logf("%d cases, %d disagreements", cases, disagreements)
}
