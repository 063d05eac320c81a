package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/frontend"
	"github.com/cloudstic/cloudstic/internal/termtext"
)

// progress renders the operation layer's progress events on stderr: one
// status line redrawn on a terminal, or one JSON line an event with
// -json-progress (docs/cli.md, "Progress").
type progress struct {
	json bool
	fd   int // terminal fd, for the width

	mu    sync.Mutex // guards out and drawn
	out   io.Writer  // the real stderr
	drawn bool       // a status line is on screen
}

// reporter returns the reporter of a long command's progress, and the
// function to call when the command's work is over; the reporter is nil
// when no progress is wanted (see progressWanted). A run the dashboard
// started hands the events to the dashboard (app.onProgress). While a
// terminal status line may be drawn, a.io.Stderr clears it before other
// output (warnings), so lines never mix; done gives stderr back.
func (a *app) reporter() (rep *operation.Reporter, done func()) {
	switch {
	case a.onProgress != nil:
		return &operation.Reporter{Emit: a.onProgress, Clock: clock.Real{}}, func() {}
	case !a.progressWanted():
		return nil, func() {}
	}
	p := &progress{json: a.g.jsonProgress, out: a.io.Stderr}
	if !p.json {
		p.fd = int(a.io.Stderr.(*os.File).Fd()) // progressWanted checked it is a terminal
		a.io.Stderr = clearingWriter{p}
	}
	return &operation.Reporter{Emit: p.emit, Clock: clock.Real{}}, func() {
		if cw, ok := a.io.Stderr.(clearingWriter); ok && cw.p == p {
			a.io.Stderr = p.out
		}
	}
}

// progressWanted says whether reporter would render anything: with
// -json-progress, or on a terminal stderr unless -quiet or -json.
func (a *app) progressWanted() bool {
	if a.onProgress != nil || a.g.jsonProgress {
		return true
	}
	f, ok := a.io.Stderr.(*os.File)
	return !a.g.quiet && !a.g.json && ok && term.IsTerminal(int(f.Fd()))
}

// emit renders one event: a JSON line, or the status line (cleared by the
// last event, before the command's summary).
func (p *progress) emit(ev operation.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.json {
		data, err := json.Marshal(ev)
		if err != nil {
			return // cannot happen: the event holds only numbers and strings
		}
		//nolint:errcheck // progress output is best effort; a broken stderr must not fail the backup
		p.out.Write(append(termtext.JSON(data), '\n'))
		return
	}
	if ev.Type == "done" {
		p.clearLocked()
		return
	}
	width := 80
	if w, _, err := term.GetSize(p.fd); err == nil && w > 20 {
		width = w
	}
	//nolint:errcheck // progress output is best effort
	io.WriteString(p.out, "\r\x1b[2K"+statusLine(ev, width-1))
	p.drawn = true
}

func (p *progress) clearLocked() {
	if p.drawn {
		//nolint:errcheck // progress output is best effort
		io.WriteString(p.out, "\r\x1b[2K")
		p.drawn = false
	}
}

// clearingWriter clears the status line before other stderr output; the
// next event redraws it below.
type clearingWriter struct{ p *progress }

func (c clearingWriter) Write(b []byte) (int, error) {
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	c.p.clearLocked()
	return c.p.out.Write(b)
}

// statusLine formats the terminal status line, at most width runes:
// "backup 0:42 1,234/5,000 files 1.2 GiB/3.4 GiB 35%  58.0 MiB/s ETA 0:40 path".
func statusLine(ev operation.Progress, width int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s", ev.Op, clockString(time.Duration(ev.ElapsedSeconds*float64(time.Second))), countOf(ev.FilesDone, ev.FilesTotal))
	unit := ev.Unit
	if unit == "" {
		unit = "files"
	}
	b.WriteString(" " + unit + " " + frontend.HumanBytes(ev.BytesDone))
	if ev.BytesTotal > 0 {
		b.WriteString("/" + frontend.HumanBytes(ev.BytesTotal))
		fmt.Fprintf(&b, " %d%%", min(100, ev.BytesDone*100/ev.BytesTotal))
	}
	fmt.Fprintf(&b, "  %s/s", frontend.HumanBytes(int64(ev.BytesPerSecond)))
	if ev.ETASeconds >= 0 {
		b.WriteString(" ETA " + clockString(time.Duration(ev.ETASeconds*float64(time.Second))))
	}
	line := []rune(b.String())
	if len(line) > width {
		return string(line[:width])
	}
	if room := width - len(line) - 2; ev.Current != "" && room >= 8 {
		cur := []rune(termtext.Safe(ev.Current)) // a file name from the source
		if len(cur) > room {
			cur = append([]rune("…"), cur[len(cur)-room+1:]...)
		}
		return string(line) + "  " + string(cur)
	}
	return string(line)
}

func countOf(done, total int64) string {
	if total > 0 {
		return fmt.Sprintf("%d/%d", done, total)
	}
	return fmt.Sprint(done)
}

func clockString(d time.Duration) string {
	sec := int64(d.Round(time.Second) / time.Second)
	if sec >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", sec/3600, sec/60%60, sec%60)
	}
	return fmt.Sprintf("%d:%02d", sec/60, sec%60)
}
