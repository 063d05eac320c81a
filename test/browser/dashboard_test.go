package browser

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
)

// stepTimeout bounds one browser step: a page that never shows what a
// step waits for fails the test instead of hanging it.
const stepTimeout = 60 * time.Second

// page drives one headless chromium tab.
type page struct {
	t   *testing.T
	ctx context.Context
}

func newPage(t *testing.T) *page {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath()),
		chromedp.NoSandbox, // chromium refuses to run as root with its sandbox
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1000, 800),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctxOf(t), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("starting chromium: %v", err)
	}
	return &page{t: t, ctx: ctx}
}

// do runs steps, failing the test on the first error.
func (p *page) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		html, _ := chromedp.Run(p.ctx, chromedp.OuterHTML(chromedp.CSS("body"))) // best effort, for the message
		p.t.Fatalf("%s: %v\npage:\n%s", what, err, html)
	}
}

// text returns the text of the first element sel matches.
func (p *page) text(sel string) string {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, stepTimeout)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		p.t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

// textOnce waits until an element sel matches has text holding want and
// returns that text, read in one step in the page: a live panel swapped
// between a wait and a read cannot make the read fail.
func (p *page) textOnce(sel, want string) string {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, stepTimeout)
	defer cancel()
	js := fmt.Sprintf(`(() => { const e = document.querySelector(%q); return e && e.innerText.includes(%q) ? e.innerText : null; })()`, sel, want)
	s, err := chromedp.Run(ctx, chromedp.Poll[string](js, chromedp.WithPollingTimeout(stepTimeout)))
	if err != nil {
		html, _ := chromedp.Run(p.ctx, chromedp.OuterHTML(chromedp.CSS("body"))) // best effort, for the message
		p.t.Fatalf("waiting for %q in %s: %v\npage:\n%s", want, sel, err, html)
	}
	return s
}

// screenshot saves the page as a small JPEG.
func (p *page) screenshot(dir, name string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, stepTimeout)
	defer cancel()
	b, err := chromedp.Run(ctx, chromedp.FullScreenshot(55))
	if err != nil {
		p.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		p.t.Fatal(err)
	}
}

func ptr[T any](v T) *T { return &v }

// TestDashboard drives the dashboard the way a user would, one step after
// the other on one repository, one `cloudstic ui` process and one browser
// (each step builds on the ones before it).
func TestDashboard(t *testing.T) {
	dir := t.TempDir()
	shots := screenshotDir(t)
	store := "local:" + filepath.Join(dir, "repo")
	src := filepath.Join(dir, "src")
	files := map[string]string{
		"docs/report.txt":                      "quarterly numbers: 42\n",
		"docs/<img src=x onerror=alert(1)>.md": "<script>alert('x')</script>\n",
		"photos/beach.jpg":                     strings.Repeat("\xff\xd8jpeg", 3000),
	}
	for p, data := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(src, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, p), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(t, store, "init")
	restoreRoot := filepath.Join(dir, "restored")
	if err := os.Mkdir(restoreRoot, 0o755); err != nil {
		t.Fatal(err)
	}
	addr := serve(t, store, "-restore-root", restoreRoot)
	base, _, _ := strings.Cut(addr, "?")
	p := newPage(t)

	t.Run("refused without the token", func(t *testing.T) {
		p.t = t
		p.do("open without the token", chromedp.Navigate(base+"r/0/"), chromedp.WaitVisible(chromedp.CSS("#error")))
		if h := p.text("h1"); h != "Not logged in" {
			t.Errorf("without the token the page says %q", h)
		}
		p.do("a wrong token", chromedp.Navigate(base+"r/0/?token=0123456789abcdef"), chromedp.WaitVisible(chromedp.CSS("#error")))
	})

	t.Run("load the dashboard", func(t *testing.T) {
		p.t = t
		p.do("log in", chromedp.Navigate(addr), chromedp.WaitVisible(chromedp.CSS("ul.repos a")), chromedp.Click(chromedp.CSS("ul.repos a")),
			chromedp.WaitVisible(chromedp.CSS("#no-locks")))
		if !strings.Contains(p.text("#timeline"), "No snapshots yet") {
			t.Error("an empty repository shows snapshots")
		}
	})

	t.Run("a snapshot appears after a CLI backup", func(t *testing.T) {
		p.t = t
		run(t, store, "backup", "-source", "local:"+src, "-tag", "<b>daily</b>")
		files["docs/new.txt"] = "added later\n"
		if err := os.WriteFile(filepath.Join(src, "docs", "new.txt"), []byte(files["docs/new.txt"]), 0o644); err != nil {
			t.Fatal(err)
		}
		out := run(t, store, "backup", "-source", "local:"+src)
		p.do("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("tr.snapshot")))
		rows := p.text("#snapshots tbody")
		if !strings.Contains(out, "Snapshot ") || !strings.Contains(rows, "<b>daily</b>") {
			t.Errorf("snapshot table %q after backups that said %q", rows, out)
		}
		p.do("growth plot", chromedp.WaitVisible(chromedp.CSS("#growth img")))
		p.screenshot(shots, "dashboard.jpg")
	})

	t.Run("a lock appears and vanishes while a backup runs", func(t *testing.T) {
		p.t = t
		big := t.TempDir()
		f, err := os.Create(filepath.Join(big, "sparse"))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(64 << 30); err != nil { // holes: the backup reads zeros for a long time
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		c := exec.Command(binary, "backup", "-source", "local:"+big, "-quiet")
		c.Env = env(store)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- c.Wait() }()
		stopped := false
		defer func() {
			if !stopped {
				_ = c.Process.Kill() // the test failed before it stopped the backup
				if err := <-exited; err == nil {
					t.Log("the backup ended by itself")
				}
			}
		}()
		// The panel updates itself (server-sent events): no reload.
		row := p.textOnce("#locks tr.lock.live", "backup")
		if !strings.Contains(row, "shared") || !strings.Contains(row, "(pid ") {
			t.Errorf("lock row %q", row)
		}
		p.screenshot(shots, "locks.jpg")
		if err := c.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		stopped = true
		if err := <-exited; err == nil {
			t.Error("the interrupted backup exited 0")
		}
		p.do("the lock goes", chromedp.WaitVisible(chromedp.CSS("#no-locks")))
	})

	t.Run("browse and download a file", func(t *testing.T) {
		p.t = t
		dl := t.TempDir()
		progress := chromedp.Events(p.ctx, browser.DownloadProgress)
		p.do("browse to docs",
			chromedp.Click(chromedp.CSS("tr.snapshot a")),
			chromedp.WaitVisible(chromedp.CSS("table.entries")),
			chromedp.Click(chromedp.Search(`//a[@class="name"][text()="docs/"]`)),
			chromedp.WaitVisible(chromedp.Search(`//span[@class="name"][text()="report.txt"]`)),
		)
		if names := p.text("table.entries"); !strings.Contains(names, "<img src=x onerror=alert(1)>.md") {
			t.Errorf("the hostile name is not shown as text: %q", names)
		}
		p.screenshot(shots, "browse.jpg")
		p.do("download report.txt",
			chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
				_, err := chromedp.Call(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
					Behavior: browser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: dl, EventsEnabled: ptr(true)})
				return err
			}),
			chromedp.Click(chromedp.Search(`//tr[td/span[text()="report.txt"]]//a[@class="download"]`)),
		)
		timeout := time.AfterFunc(stepTimeout, func() { t.Error("the download did not complete") })
		defer timeout.Stop()
		for ev, err := range progress {
			if err != nil {
				t.Fatal(err)
			}
			if ev.State == browser.DownloadProgressStateCanceled {
				t.Fatal("the download was cancelled")
			}
			if ev.State != browser.DownloadProgressStateCompleted {
				continue
			}
			got, err := os.ReadFile(filepath.Join(dl, ev.GUID))
			if err != nil || string(got) != files["docs/report.txt"] {
				t.Errorf("downloaded %q (%v), want %q", got, err, files["docs/report.txt"])
			}
			break
		}
	})

	t.Run("restore", func(t *testing.T) {
		p.t = t
		target := filepath.Join(restoreRoot, "docs-back")
		p.do("restore docs",
			chromedp.Click(chromedp.CSS("#restore-dir")),
			chromedp.WaitVisible(chromedp.CSS("#restore-form")),
			chromedp.SetValue(chromedp.CSS("#target"), target),
		)
		p.screenshot(shots, "restore.jpg")
		p.do("without confirming", chromedp.Click(chromedp.CSS("#restore-go")), chromedp.WaitVisible(chromedp.CSS("#restore-error")))
		p.do("confirmed",
			chromedp.SetValue(chromedp.CSS("#target"), target),
			chromedp.Click(chromedp.CSS("#confirm")),
			chromedp.Click(chromedp.CSS("#restore-go")),
			chromedp.WaitVisible(chromedp.CSS("section#job")), // the job's page, not the form's
		)
		if s := p.textOnce("#job-body", "done"); !strings.Contains(s, "Restored snapshot") {
			t.Errorf("restore job %q", s)
		}
		p.screenshot(shots, "job.jpg")
		for name, data := range files {
			if !strings.HasPrefix(name, "docs/") {
				continue
			}
			got, err := os.ReadFile(filepath.Join(target, name))
			if err != nil || string(got) != data {
				t.Errorf("restored %s: %q (%v), want %q", name, got, err, data)
			}
		}
	})

	t.Run("phone width", func(t *testing.T) {
		p.t = t
		p.do("narrow dashboard", chromedp.EmulateViewport(390, 800), chromedp.Navigate(base+"r/0/"), chromedp.WaitVisible(chromedp.CSS("tr.snapshot")))
		width, err := chromedp.Run(p.ctx, chromedp.Evaluate[int]("document.documentElement.scrollWidth"))
		if err != nil {
			t.Fatal(err)
		}
		if width > 390 {
			wide, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll("body *")).filter(e => e.getBoundingClientRect().right > 390).map(e => e.tagName + "." + e.className + "#" + e.id + " " + Math.round(e.getBoundingClientRect().right)).join(", ")`))
			t.Errorf("at 390 px the page is %d px wide: it scrolls sideways (%s)", width, wide)
		}
		p.screenshot(shots, "phone.jpg")
	})
}
