package s3

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/store"
)

// TestServerDate: the bound kept is the tightest of the Dates seen, it
// advances with the monotonic clock, and it is used only while the latest
// answer is at most dateFresh old.
func TestServerDate(t *testing.T) {
	d0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	type seen struct {
		date time.Time
		mono time.Duration
	}
	rows := []struct {
		name   string
		seen   []seen
		at     time.Duration
		want   time.Time
		wantOK bool
	}{
		{"nothing seen", nil, time.Second, time.Time{}, false},
		{"one answer", []seen{{d0, 5 * time.Second}}, 7 * time.Second, d0.Add(2 * time.Second), true},
		{"a later answer with the same Date is a looser bound",
			[]seen{{d0, 5 * time.Second}, {d0, 6 * time.Second}}, 7 * time.Second, d0.Add(2 * time.Second), true},
		{"a later Date that is a tighter bound wins",
			[]seen{{d0, 5 * time.Second}, {d0.Add(3 * time.Second), 6 * time.Second}}, 7 * time.Second, d0.Add(4 * time.Second), true},
		{"fresh while the latest answer is recent, even a looser one",
			[]seen{{d0.Add(time.Second), 5 * time.Second}, {d0, 12 * time.Second}}, 20 * time.Second, d0.Add(16 * time.Second), true},
		{"at the edge of fresh", []seen{{d0, 5 * time.Second}}, 5*time.Second + dateFresh, d0.Add(dateFresh), true},
		{"stale", []seen{{d0, 5 * time.Second}}, 5*time.Second + dateFresh + time.Millisecond, time.Time{}, false},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			var d serverDate
			for _, s := range row.seen {
				d.observe(s.date, s.mono)
			}
			got, ok := d.now(row.at)
			if ok != row.wantOK || !got.Equal(row.want) {
				t.Fatalf("now(%v) = %v, %v; want %v, %v", row.at, got, ok, row.want, row.wantOK)
			}
		})
	}
}

// TestNowFromAnswers: right after Open (which asked for the bucket) Now
// sends no request, and its time is a lower bound of the server's clock: a
// Put made after it is stamped (to the second) no earlier. A store that has
// heard nothing from the server recently asks it.
func TestNowFromAnswers(t *testing.T) {
	ctx := context.Background()
	eachServer(t, func(t *testing.T, e testEnv) {
		s := openTest(t, e.config(t, FlavorS3))
		before, _, _ := s.Stats()
		now, err := s.Now(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if after, _, _ := s.Stats(); after != before {
			t.Errorf("Now after Open sent %d requests, want 0", after-before)
		}
		info, err := s.Put(ctx, "k", []byte("v"), store.PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if info.ModTime.IsZero() {
			t.Fatal("the server sent no Date header")
		}
		// The Put's Date is truncated to the second.
		if !now.Before(info.ModTime.Add(time.Second)) || now.Before(info.ModTime.Add(-time.Minute)) {
			t.Errorf("Now = %v, then a Put was stamped %v: not a lower bound of the server's clock", now, info.ModTime)
		}

		s.date = serverDate{} // as a store that has not heard from the server lately
		before, _, _ = s.Stats()
		asked, err := s.Now(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if after, _, _ := s.Stats(); after != before+1 {
			t.Errorf("Now with no recent answer sent %d requests, want 1", after-before)
		}
		if asked.Before(info.ModTime) {
			t.Errorf("Now asked the server and got %v, before the earlier Put's Date %v", asked, info.ModTime)
		}
	})
}

// TestDateFromServerAnswersOnly: the request middleware takes the store's
// time from the server's own answers, not from a 5xx a proxy in front of
// it may have sent with another clock.
func TestDateFromServerAnswersOnly(t *testing.T) {
	date := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	for _, row := range []struct {
		status int
		want   bool
	}{{200, true}, {404, true}, {412, true}, {500, false}, {503, false}} {
		t.Run(http.StatusText(row.status), func(t *testing.T) {
			s := &Store{clock: clock.NewFake(date)}
			next := middleware.DeserializeHandlerFunc(func(ctx context.Context, in middleware.DeserializeInput) (
				middleware.DeserializeOutput, middleware.Metadata, error) {
				resp := &smithyhttp.Response{Response: &http.Response{StatusCode: row.status,
					Header: http.Header{"Date": []string{date.Format(http.TimeFormat)}}}}
				return middleware.DeserializeOutput{RawResponse: resp}, middleware.Metadata{}, nil
			})
			req := smithyhttp.NewStackRequest().(*smithyhttp.Request)
			if _, _, err := s.logRequest(context.Background(), middleware.DeserializeInput{Request: req}, next); err != nil {
				t.Fatal(err)
			}
			if _, ok := s.date.now(s.clock.Mono()); ok != row.want {
				t.Errorf("after a %d answer, Now from its Date: %v, want %v", row.status, ok, row.want)
			}
		})
	}
}
