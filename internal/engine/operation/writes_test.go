package operation_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestWritesNeedAWriter: a write without a lease does not compile.
// testdata/writes/readonly calls every write on a value that must not
// allow it (the read-only repo.Repository and its views, a shared lease's
// writer asked to delete packs, a keyring, the operation layer's Repo and
// Keyring): each line marked ERROR must fail to build with the message
// its pattern matches, and no other line may. testdata/writes/writer makes
// the same writes through the writers a lease gives, and must build.
func TestWritesNeedAWriter(t *testing.T) {
	t.Parallel()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("building the test packages needs the go tool: %v", err)
	}
	for _, pkg := range []string{"readonly", "writer"} {
		t.Run(pkg, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join("testdata", "writes", pkg)
			want := wantedErrors(t, dir)
			// -e: every error, not the first ten.
			out, err := exec.Command(goTool, "build", "-gcflags=-e", "./"+filepath.ToSlash(dir)).CombinedOutput()
			got := buildErrors(dir, string(out))
			if len(want) == 0 && err != nil {
				t.Fatalf("%s does not build: %v\n%s", dir, err, out)
			}
			if len(want) > 0 && err == nil {
				t.Fatalf("%s builds: every write it makes compiles", dir)
			}
			if len(want) > 0 && len(got) == 0 {
				t.Fatalf("building %s failed with no compile error: %v\n%s", dir, err, out)
			}
			for line, pattern := range want {
				msg, ok := got[line]
				switch {
				case !ok:
					t.Errorf("line %d compiles; want an error matching %q", line, pattern)
				case !pattern.MatchString(msg):
					t.Errorf("line %d: %q, want an error matching %q", line, msg, pattern)
				}
			}
			for line, msg := range got {
				if want[line] == nil {
					t.Errorf("line %d: unexpected error %q", line, msg)
				}
			}
		})
	}
}

// errorMark is the comment that marks a line that must not compile.
var errorMark = regexp.MustCompile(`// ERROR "(.*)"\s*$`)

// wantedErrors returns, by line, the pattern each line of dir's one Go
// file marked ERROR must fail with.
func wantedErrors(t *testing.T, dir string) map[int]*regexp.Regexp {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) != 1 {
		t.Fatalf("%s: want one Go file, found %v (%v)", dir, files, err)
	}
	f, err := os.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close() //nolint:errcheck // read only
	want := map[int]*regexp.Regexp{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		if m := errorMark.FindStringSubmatch(sc.Text()); m != nil {
			want[line] = regexp.MustCompile(regexp.QuoteMeta(m[1]))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return want
}

// buildErrors returns, by line, the compile errors go build reported for
// the file in dir ("dir/file.go:LINE:COL: message").
func buildErrors(dir, out string) map[int]string {
	prefix := filepath.ToSlash(dir) + "/"
	got := map[int]string{}
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimPrefix(l, "./")
		rest, ok := strings.CutPrefix(filepath.ToSlash(l), prefix)
		if !ok {
			continue
		}
		parts := strings.SplitN(rest, ":", 4)
		if len(parts) != 4 {
			continue
		}
		line, err := strconv.Atoi(parts[1])
		if err != nil {
			continue
		}
		got[line] = strings.TrimSpace(parts[3])
	}
	return got
}
