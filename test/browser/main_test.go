package browser

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/test/testbin"
)

// binary is the cloudstic executable TestMain builds.
var binary string

func TestMain(m *testing.M) {
	if _, err := exec.LookPath(chromiumPath()); err != nil {
		fmt.Fprintf(os.Stderr, "browser tests: chromium not found (%v): install it with 'apt-get install -y chromium' (scripts/test.sh does)\n", err)
		os.Exit(1)
	}
	os.Exit(testbin.Main(m, func(_, bin string) { binary = bin }))
}

// chromiumPath is the browser the tests drive: $CHROMIUM or Debian's.
func chromiumPath() string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	return "chromium"
}

// env is the environment of every cloudstic process: the test's, without
// anything that would configure cloudstic behind its back, plus the
// repository's store and password.
func env(store string) []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "CLOUDSTIC_") || strings.HasPrefix(k, "AWS_") {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "CLOUDSTIC_STORE="+store, "CLOUDSTIC_PASSWORD=browser-test", "CLOUDSTIC_NO_CACHE=1")
}

// run runs cloudstic to completion and fails the test if it fails.
func run(t *testing.T, store string, args ...string) string {
	t.Helper()
	c := exec.Command(binary, args...)
	c.Env = env(store)
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("cloudstic %v: %v\n%s", args, err, out)
	}
	return string(out)
}

var urlRE = regexp.MustCompile(`https?://\S+`)

// serve starts `cloudstic ui` with args and returns the address it printed
// (with the token). Its stderr is read line by line until that line, then
// drained into a file, so the process never blocks on a full pipe.
func serve(t *testing.T, store string, args ...string) string {
	t.Helper()
	c := exec.Command(binary, append([]string{"ui", "-listen", "127.0.0.1:0"}, args...)...)
	c.Env = env(store)
	stderr, err := c.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Process.Signal(os.Interrupt) // it may have exited already
		_ = c.Wait()                       // the test is over; its exit status was checked while it served
	})
	r := bufio.NewReader(stderr)
	var seen []string
	for {
		line, err := r.ReadString('\n')
		if u := urlRE.FindString(line); u != "" {
			log, lerr := os.Create(filepath.Join(t.TempDir(), "ui.log"))
			if lerr != nil {
				t.Fatal(lerr)
			}
			go func() {
				_, _ = io.Copy(log, r) // the rest of the log; nothing asserts on it
				_ = log.Close()
			}()
			return u
		}
		seen = append(seen, line)
		if err != nil {
			t.Fatalf("cloudstic ui exited before serving: %v\n%s", err, strings.Join(seen, ""))
		}
	}
}

// screenshotDir is where screenshots go: docs/ui/ with
// CLOUDSTIC_UPDATE_SCREENSHOTS=1, else the test's temporary directory.
func screenshotDir(t *testing.T) string {
	if os.Getenv("CLOUDSTIC_UPDATE_SCREENSHOTS") == "1" {
		return filepath.Join("..", "..", "docs", "ui")
	}
	return t.TempDir()
}

// ctxOf is a context the test ends.
func ctxOf(t *testing.T) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return ctx
}
