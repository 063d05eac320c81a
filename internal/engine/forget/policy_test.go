package forget

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
)

// snap makes a snapshot with id byte n at the given RFC 3339 time.
func snap(n byte, ts string) snapshot.WithID {
	t, err := time.Parse(time.RFC3339, ts)
	if err != nil {
		panic(err)
	}
	return snapshot.WithID{ID: id.ID{n}, Snapshot: &snapshot.Snapshot{Time: t, Tree: id.ID{0xee}, Source: "local:/a", Hostname: "h", Path: "/a"}}
}

// kept renders decisions as "id:reason+reason" for kept ones, newest first.
func kept(ds []Decision) string {
	var out []string
	for _, d := range ds {
		if d.Keep {
			out = append(out, string(rune('a'+d.ID[0]-1))+":"+strings.Join(d.Reasons, "+"))
		}
	}
	return strings.Join(out, " ")
}

func TestApply(t *testing.T) {
	tokyo := time.FixedZone("JST", 9*3600)
	ny := time.FixedZone("EST", -5*3600)
	week := []snapshot.WithID{ // a=1 .. g=7, one per day at 10:00 UTC, Mon 2024-01-01 .. Sun 2024-01-07
		snap(1, "2024-01-01T10:00:00Z"), snap(2, "2024-01-02T10:00:00Z"), snap(3, "2024-01-03T10:00:00Z"),
		snap(4, "2024-01-04T10:00:00Z"), snap(5, "2024-01-05T10:00:00Z"), snap(6, "2024-01-06T10:00:00Z"),
		snap(7, "2024-01-07T10:00:00Z"),
	}
	cases := []struct {
		name  string
		snaps []snapshot.WithID
		p     Policy
		loc   *time.Location
		want  string
	}{
		{name: "empty group", snaps: nil, p: Policy{Last: 3, Daily: 2}, want: ""},
		{name: "last 3", snaps: week, p: Policy{Last: 3}, want: "g:last f:last e:last"},
		{name: "last more than there are", snaps: week[:2], p: Policy{Last: 5}, want: "b:last a:last"},
		{name: "daily 2 and last 1 share reasons", snaps: week, p: Policy{Last: 1, Daily: 2}, want: "g:last+daily f:daily"},
		{name: "weekly crosses ISO week", snaps: append(week, snap(8, "2024-01-08T10:00:00Z")), p: Policy{Weekly: 2},
			want: "h:weekly g:weekly"},
		{name: "monthly and yearly", snaps: []snapshot.WithID{snap(1, "2023-12-31T10:00:00Z"), snap(2, "2024-01-15T10:00:00Z"),
			snap(3, "2024-01-20T10:00:00Z"), snap(4, "2024-02-01T10:00:00Z")}, p: Policy{Monthly: 3, Yearly: 5},
			want: "d:monthly+yearly c:monthly a:monthly+yearly"},
		{name: "hourly", snaps: []snapshot.WithID{snap(1, "2024-01-01T10:05:00Z"), snap(2, "2024-01-01T10:55:00Z"),
			snap(3, "2024-01-01T11:01:00Z")}, p: Policy{Hourly: 10}, want: "c:hourly b:hourly"},
		// 23:30 UTC on the 1st is the 2nd in Tokyo: in UTC the two are one
		// day, in Tokyo two days.
		{name: "time zone utc", snaps: []snapshot.WithID{snap(1, "2024-01-01T10:00:00Z"), snap(2, "2024-01-01T23:30:00Z")},
			p: Policy{Daily: 5}, loc: time.UTC, want: "b:daily"},
		{name: "time zone tokyo", snaps: []snapshot.WithID{snap(1, "2024-01-01T10:00:00Z"), snap(2, "2024-01-01T23:30:00Z")},
			p: Policy{Daily: 5}, loc: tokyo, want: "b:daily a:daily"},
		{name: "time zone new york", snaps: []snapshot.WithID{snap(1, "2024-01-02T03:00:00Z"), snap(2, "2024-01-02T06:00:00Z")},
			p: Policy{Daily: 5}, loc: ny, want: "b:daily a:daily"},
		{name: "tie keeps the larger id", snaps: []snapshot.WithID{snap(2, "2024-01-01T10:00:00Z"), snap(1, "2024-01-01T10:00:00Z")},
			p: Policy{Daily: 1}, want: "b:daily"},
		{name: "tie last 1 input order irrelevant", snaps: []snapshot.WithID{snap(1, "2024-01-01T10:00:00Z"), snap(2, "2024-01-01T10:00:00Z")},
			p: Policy{Last: 1}, want: "b:last"},
		{name: "zero policy keeps nothing", snaps: week[:2], p: Policy{}, want: ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ds := Apply(c.snaps, c.p, c.loc)
			if len(ds) != len(c.snaps) {
				t.Fatalf("%d decisions for %d snapshots", len(ds), len(c.snaps))
			}
			for i := 1; i < len(ds); i++ {
				if ds[i].Time.After(ds[i-1].Time) {
					t.Fatalf("decisions not newest first")
				}
			}
			if got := kept(ds); got != c.want {
				t.Fatalf("kept %q, want %q", got, c.want)
			}
		})
	}
}

func TestPlan(t *testing.T) {
	a := snap(1, "2024-01-01T10:00:00Z")
	b := snap(2, "2024-01-02T10:00:00Z")
	c := snap(3, "2024-01-03T10:00:00Z")
	c.Snapshot = &snapshot.Snapshot{Time: c.Time, Tree: c.Tree, Source: "local:/b", Hostname: "h", Path: "/b", Tags: []string{"x"}}
	all := []snapshot.WithID{a, b, c}
	by := func(s string) GroupBy {
		g, err := ParseGroupBy(s)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	cases := []struct {
		name    string
		opts    Options
		groups  int
		removed []id.ID
		err     error
	}{
		{name: "nothing given", opts: Options{}, err: ErrNoPolicy},
		{name: "both", opts: Options{IDs: []string{"latest"}, Policy: Policy{Last: 1}}, err: ErrIDsAndPolicy},
		{name: "by id", opts: Options{IDs: []string{a.ID.String()[:8], a.ID.String()}}, groups: 1, removed: []id.ID{a.ID}},
		{name: "grouped by path", opts: Options{Policy: Policy{Last: 1}, GroupBy: by(DefaultGroupBy)}, groups: 2, removed: []id.ID{a.ID}},
		{name: "one group", opts: Options{Policy: Policy{Last: 1}, GroupBy: by("")}, groups: 1, removed: []id.ID{b.ID, a.ID}},
		{name: "tag filter", opts: Options{Policy: Policy{Last: 1}, Filter: Filter{Tags: []string{"x"}}}, groups: 1},
		{name: "host filter matches none", opts: Options{Policy: Policy{Last: 1}, Filter: Filter{Host: "other"}}, groups: 0},
		{name: "source filter", opts: Options{Policy: Policy{Last: 1}, Filter: Filter{Source: "local:/a"}}, groups: 1, removed: []id.ID{a.ID}},
		{name: "tag filter, no keep rule", opts: Options{Filter: Filter{Tags: []string{"x"}}}, groups: 1, removed: []id.ID{c.ID}},
		{name: "source filter, no keep rule", opts: Options{Filter: Filter{Source: "local:/a"}, GroupBy: by(DefaultGroupBy)}, groups: 1, removed: []id.ID{b.ID, a.ID}},
		{name: "empty filter, no keep rule", opts: Options{Filter: Filter{Tags: []string{}}}, err: ErrNoPolicy},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Plan(all, tc.opts)
			if !errors.Is(err, tc.err) {
				t.Fatalf("Plan = %v, want %v", err, tc.err)
			}
			if err != nil {
				return
			}
			if len(res.Groups) != tc.groups {
				t.Fatalf("%d groups, want %d", len(res.Groups), tc.groups)
			}
			var removed []id.ID
			for _, g := range res.Groups {
				for _, d := range g.Remove {
					removed = append(removed, d.ID)
				}
			}
			if !reflect.DeepEqual(removed, tc.removed) {
				t.Fatalf("removed %v, want %v", removed, tc.removed)
			}
		})
	}
}

func TestParseGroupBy(t *testing.T) {
	if _, err := ParseGroupBy("source,bogus"); err == nil {
		t.Fatal("accepted an unknown field")
	}
	g, err := ParseGroupBy("host, tags")
	if err != nil || g != (GroupBy{Host: true, Tags: true}) {
		t.Fatalf("ParseGroupBy = %+v, %v", g, err)
	}
}

// TestPlanOneGroup: with Group set the policy applies to that group only,
// not to a group the filter also lets through (the same source with one
// more tag), nor to the others.
func TestPlanOneGroup(t *testing.T) {
	mk := func(n byte, when string, tags ...string) snapshot.WithID {
		s := snap(n, when)
		s.Snapshot = &snapshot.Snapshot{Time: s.Time, Tree: s.Tree, Source: "local:/b", Hostname: "h", Path: "/b", Tags: tags}
		return s
	}
	old := mk(1, "2024-01-01T10:00:00Z", "x")
	kept := mk(2, "2024-01-02T10:00:00Z", "x", "keep")
	mid := mk(3, "2024-01-03T10:00:00Z", "x")
	last := mk(4, "2024-01-04T10:00:00Z", "x")
	other := snap(5, "2024-01-01T09:00:00Z") // local:/a
	all := []snapshot.WithID{old, kept, mid, last, other}
	by := GroupBy{Source: true, Host: true, Path: true, Tags: true}
	key := by.Key(last.Snapshot)
	res, err := Plan(all, Options{Policy: Policy{Last: 1}, Filter: Filter{Tags: []string{"x"}}, GroupBy: by, Group: &key})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Groups) != 1 || !reflect.DeepEqual(res.Groups[0].Key, key) {
		t.Fatalf("groups %+v, want only %+v", res.Groups, key)
	}
	var removed []id.ID
	for _, d := range res.Groups[0].Remove {
		removed = append(removed, d.ID)
	}
	if want := []id.ID{mid.ID, old.ID}; !reflect.DeepEqual(removed, want) {
		t.Errorf("removed %v, want %v (the group's older snapshots, not the one tagged keep)", removed, want)
	}
}
