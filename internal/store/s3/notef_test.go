package s3

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/store"
)

// TestNotef: with Config.Notef set, the lines of a request riding out an
// outage (each retry and its wait) go to Notef, which the CLI prints
// without -debug, and not to Logf, the request log; without Notef they go
// to Logf (TestOutage). A brief request's retries go to Logf only
// (TestBriefRetries).
func TestNotef(t *testing.T) {
	eachServer(t, func(t *testing.T, e testEnv) {
		notes := newRetryLog()
		s, p, requests := openThrough(t, e, func(c *Config) { c.Notef = notes.logf })
		ctx := context.Background()
		if _, err := s.Put(ctx, "k", []byte("v"), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		p.Refuse(true)
		p.Cut()
		done := make(chan error, 1)
		go func() {
			_, err := s.Get(ctx, "k", 1<<20)
			done <- err
		}()
		select {
		case <-notes.retried:
		case err := <-done:
			t.Fatalf("Get ended before a retry was noted: %v\nrequest log:\n%s", err, requests)
		case <-time.After(time.Minute):
			t.Fatal("no retry noted in a minute")
		}
		p.Refuse(false)
		if err := <-done; err != nil {
			t.Fatalf("Get after the outage: %v", err)
		}
		// The Get's retries are Notef's; the probe's brief retries, if
		// the outage met it, go to the request log (TestBriefRetries).
		if strings.Contains(requests.String(), "GetObject attempt") {
			t.Errorf("the Get's retries are in the request log (Logf), want them in Notef only:\n%s", requests)
		}
		if !strings.Contains(notes.String(), "GetObject attempt 1 failed") {
			t.Errorf("Notef got no line for the Get's first retry:\n%s", notes)
		}
	})
}
