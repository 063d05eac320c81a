package operation_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/check"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/engine/restore"
)

// events collects a Reporter's events.
type events struct {
	mu  sync.Mutex
	all []operation.Progress
}

func (e *events) reporter() *operation.Reporter {
	return &operation.Reporter{Interval: time.Millisecond, Emit: func(p operation.Progress) {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.all = append(e.all, p)
	}}
}

// last returns the last event, and checks that it is the only "done" one.
func (e *events) last(t *testing.T) operation.Progress {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.all) == 0 {
		t.Fatal("no progress event")
	}
	for _, p := range e.all[:len(e.all)-1] {
		if p.Type != "progress" {
			t.Fatalf("event %+v before the last one", p)
		}
	}
	return e.all[len(e.all)-1]
}

// TestReporterEvents: backup, restore and check report their counters,
// ending with one "done" event that holds the final counts.
func TestReporterEvents(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	checktest.NewRepo(t, dir)
	src := t.TempDir()
	var total int64
	for i := range 20 {
		checktest.WriteFile(t, src, fmt.Sprintf("f%02d", i), uint64(i), 1000*i)
		total += int64(1000 * i)
	}
	r := openRepo(t, dir)

	var b events
	if _, err := operation.Backup(ctx, r.Fresh(), backup.Options{Path: src}, b.reporter().Backup); err != nil {
		t.Fatal(err)
	}
	if p := b.last(t); p.Type != "done" || p.Op != "backup" || p.Unit != "files" || p.FilesDone != 20 || p.BytesDone != total {
		t.Errorf("backup's last event = %+v", p)
	}

	var rs events
	if _, err := operation.Restore(ctx, r.Fresh(), "latest", restore.Options{Output: filepath.Join(t.TempDir(), "out")}, rs.reporter().Restore); err != nil {
		t.Fatal(err)
	}
	if p := rs.last(t); p.Type != "done" || p.Op != "restore" || p.FilesDone != 20 || p.FilesTotal != 20 || p.BytesDone != total || p.BytesTotal != total {
		t.Errorf("restore's last event = %+v", p)
	}

	var c events
	if _, err := operation.Check(ctx, r, check.Options{ReadData: true}, c.reporter().Check); err != nil {
		t.Fatal(err)
	}
	if p := c.last(t); p.Type != "done" || p.Op != "check" || p.Unit != "packs" || p.FilesDone == 0 || p.FilesDone != p.FilesTotal {
		t.Errorf("check's last event = %+v", p)
	}

	var none *operation.Reporter
	if _, err := operation.Backup(ctx, r.Fresh(), backup.Options{Path: src}, none.Backup); err != nil {
		t.Errorf("a nil reporter: %v", err)
	}
}
