package ui_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/metrics"
	"github.com/cloudstic/cloudstic/internal/frontend"
	dto "github.com/prometheus/client_model/go"
)

// scrape GETs /metrics with the given auth and parses the answer with
// Prometheus's own text parser.
func scrape(t *testing.T, f *fixture, auth func(*http.Request)) map[string]*dto.MetricFamily {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, f.srv.URL+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	auth(req)
	res := f.do(t, f.client(t, false), req)
	if res.code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", res.code, res.body)
	}
	if ct := res.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type %q, want text/plain", ct)
	}
	fams, err := metrics.Parse(strings.NewReader(res.body))
	if err != nil {
		t.Fatalf("parsing /metrics: %v\n%s", err, res.body)
	}
	return fams
}

// value is the value of the series of name whose labels include want;
// ok is false when there is none.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	fam, ok := fams[name]
	if !ok {
		return 0, false
	}
next:
	for _, m := range fam.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if got[k] != v {
				continue next
			}
		}
		return m.GetGauge().GetValue(), true
	}
	return 0, false
}

// TestMetrics: /metrics answers the dashboard's credentials only, and
// reports the repository's snapshots, newest backup, locks by kind and,
// once the growth plot counted it, its size.
func TestMetrics(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		tweak func(*frontend.Config)
		auth  func(*http.Request)
		wrong func(*http.Request)
	}{
		{"bearer token", nil,
			func(r *http.Request) { r.Header.Set("Authorization", "Bearer secret-token") },
			func(r *http.Request) { r.Header.Set("Authorization", "Bearer wrong") }},
		{"basic auth", func(c *frontend.Config) { c.User, c.Password = "prom", "pw" },
			func(r *http.Request) { r.SetBasicAuth("prom", "pw") },
			func(r *http.Request) { r.SetBasicAuth("prom", "wrong") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, func(c *frontend.Config) {
				c.Repos[0].Profile = "home"
				if tc.tweak != nil {
					tc.tweak(c)
				}
			})
			for _, refuse := range []func(*http.Request){func(*http.Request) {}, tc.wrong} {
				req, err := http.NewRequest(http.MethodGet, f.srv.URL+"/metrics", nil)
				if err != nil {
					t.Fatal(err)
				}
				refuse(req)
				if res := f.do(t, f.client(t, false), req); res.code != http.StatusUnauthorized || strings.Contains(res.body, "cloudstic_") {
					t.Fatalf("without valid credentials: %d %s", res.code, res.body)
				}
			}
			_ = f.writer(t) // a shared lock held until the test ends
			labels := map[string]string{"repository": "local:../x", "profile": "home"}
			fams := scrape(t, f, tc.auth)
			s := f.s2.Summary
			end := f.s2.Time.Add(secondsDuration(s.DurationSeconds))
			for _, want := range []struct {
				name   string
				kind   string
				value  float64
				absent bool
			}{
				{name: metrics.RepoUp, value: 1},
				{name: metrics.Snapshots, value: 2},
				{name: metrics.LastSuccess, value: float64(end.UnixNano()) / 1e9},
				{name: metrics.LastDuration, value: s.DurationSeconds},
				{name: metrics.LastBytes, value: float64(s.BytesAdded)},
				{name: metrics.LastFiles, value: 1}, // docs/new.txt
				{name: metrics.LocksHeld, kind: "shared", value: 1},
				{name: metrics.LocksHeld, kind: "exclusive", value: 0},
				{name: metrics.LocksHeld, kind: "intent", value: 0},
				{name: metrics.RepoSize, absent: true}, // not counted yet
			} {
				l := labels
				if want.kind != "" {
					l = map[string]string{"repository": "local:../x", "profile": "home", "kind": want.kind}
				}
				got, ok := value(fams, want.name, l)
				switch {
				case want.absent && ok:
					t.Errorf("%s present (%v) before the growth plot counted the size", want.name, got)
				case !want.absent && !ok:
					t.Errorf("%s%v missing", want.name, l)
				case !want.absent && got != want.value:
					t.Errorf("%s%v = %v, want %v", want.name, l, got, want.value)
				}
			}
			if s.BytesAdded <= 0 {
				t.Errorf("the second backup stored %d bytes: the fixture should add a file", s.BytesAdded)
			}
			c := f.client(t, false)
			req, err := http.NewRequest(http.MethodGet, f.srv.URL+"/r/0/growth.svg", nil)
			if err != nil {
				t.Fatal(err)
			}
			tc.auth(req)
			if res := f.do(t, c, req); res.code != http.StatusOK {
				t.Fatalf("growth.svg: %d", res.code)
			}
			if size, ok := value(scrape(t, f, tc.auth), metrics.RepoSize, labels); !ok || size <= 0 {
				t.Errorf("%s after the growth plot: %v (present: %v), want > 0", metrics.RepoSize, size, ok)
			}
		})
	}
}

func secondsDuration(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
