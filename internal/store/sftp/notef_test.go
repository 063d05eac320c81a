package sftp

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/store"
)

// lines is a Config.Logf or Notef that keeps what it gets.
type lines struct {
	mu  sync.Mutex
	got []string
}

func (l *lines) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, fmt.Sprintf(format, args...))
}

// String returns the lines kept, one per line.
func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.got, "\n")
}

// TestReconnectNotef: with Config.Notef set, the lines of a reconnect
// (the connection lost, each failed attempt and its wait, the reconnect)
// go to Notef, which the CLI prints without -debug, and not to Logf, the
// debug log.
func TestReconnectNotef(t *testing.T) {
	var notes, debug lines
	cfg := testConfig(t)
	cfg.Logf, cfg.Notef = debug.logf, notes.logf
	s, p, clk := backoffStore(t, cfg)
	clk.onWait = func(n int) <-chan time.Time {
		if n == 2 {
			p.Refuse(false)
		}
		return elapsed()
	}
	ctx := context.Background()
	if _, err := s.Put(ctx, "k", []byte("v"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	p.Refuse(true)
	p.Cut()
	if _, err := s.Get(ctx, "k", 1<<20); err != nil {
		t.Fatalf("Get after the outage: %v", err)
	}
	for _, want := range []string{"lost; reconnecting", "attempt 1 to", "attempt 2 to", "reconnected to"} {
		if !strings.Contains(notes.String(), want) {
			t.Errorf("Notef got no line with %q:\n%s", want, &notes)
		}
		if strings.Contains(debug.String(), want) {
			t.Errorf("Logf got a line with %q, which is Notef's:\n%s", want, &debug)
		}
	}
}
