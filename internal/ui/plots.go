package ui

import (
	"fmt"
	"html/template"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/frontend"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
)

// Plot geometry, in SVG user units; the SVG scales to the page's width.
const (
	plotWidth  = 720
	plotLeft   = 10
	plotRight  = 710
	rowHeight  = 40
	axisHeight = 24
)

// esc escapes text for SVG (XML) content and attributes.
func esc(s string) string { return template.HTMLEscapeString(s) }

// timeScale maps times between lo and hi onto [plotLeft, plotRight].
func timeScale(lo, hi time.Time) func(time.Time) float64 {
	span := hi.Sub(lo).Seconds()
	return func(t time.Time) float64 {
		if span <= 0 {
			return (plotLeft + plotRight) / 2
		}
		return plotLeft + (plotRight-plotLeft)*t.Sub(lo).Seconds()/span
	}
}

// timelineSVG draws snaps (oldest first) as one row of dots per host and
// source, each dot a link to the snapshot, its tags in its tooltip and in
// a hollow dot's ring.
func timelineSVG(snaps []snapshot.WithID) template.HTML {
	if len(snaps) == 0 {
		return ""
	}
	groups := map[string][]snapshot.WithID{}
	for _, s := range snaps {
		k := s.Hostname + "  " + s.Source
		groups[k] = append(groups[k], s)
	}
	names := make([]string, 0, len(groups))
	for k := range groups {
		names = append(names, k)
	}
	sort.Strings(names)
	x := timeScale(snaps[0].Time, snaps[len(snaps)-1].Time)
	height := len(names)*rowHeight + axisHeight
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="plot" viewBox="0 0 %d %d" role="img" aria-label="snapshots per host and source over time" xmlns="http://www.w3.org/2000/svg">`, plotWidth, height)
	for row, name := range names {
		y := row*rowHeight + 14
		fmt.Fprintf(&b, `<text x="%d" y="%d" class="label">%s</text>`, plotLeft, y, esc(name))
		cy := y + 14
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" class="track"/>`, plotLeft, cy, plotRight, cy)
		for _, s := range groups[name] {
			cls := "dot"
			if len(s.Tags) > 0 {
				cls = "dot tagged"
			}
			title := s.ID.Short() + " " + s.Time.Local().Format("2006-01-02 15:04")
			if len(s.Tags) > 0 {
				title += " [" + strings.Join(s.Tags, ", ") + "]"
			}
			fmt.Fprintf(&b, `<a href="s/%s/"><circle cx="%.1f" cy="%d" r="6" class="%s"><title>%s</title></circle></a>`,
				s.ID.String(), x(s.Time), cy, cls, esc(title))
		}
	}
	axisY := len(names)*rowHeight + 16
	fmt.Fprintf(&b, `<text x="%d" y="%d" class="axis">%s</text>`, plotLeft, axisY, esc(snaps[0].Time.Local().Format("2006-01-02 15:04")))
	fmt.Fprintf(&b, `<text x="%d" y="%d" class="axis end">%s</text>`, plotRight, axisY, esc(snaps[len(snaps)-1].Time.Local().Format("2006-01-02 15:04")))
	b.WriteString(`</svg>`)
	// Every text in it went through esc.
	return template.HTML(b.String())
}

// growthSVG draws the stored size (filled) and the deduplication ratio
// (a line, right axis) after each snapshot.
func growthSVG(rows []operation.GrowthRow) string {
	const top, bottom, height = 34, 180, 210 // top leaves room for the header line above the top tick
	var b strings.Builder
	fmt.Fprintf(&b, `<svg viewBox="0 0 %d %d" xmlns="http://www.w3.org/2000/svg" font-family="sans-serif" font-size="12">`, plotWidth, height)
	b.WriteString(`<style>.size{fill:#cfe3f7;stroke:#2b6cb0;stroke-width:2}.ratio{fill:none;stroke:#c05621;stroke-width:2;stroke-dasharray:5 3}text{fill:#333}.r{fill:#c05621}.grid{stroke:#ddd;stroke-width:1}.tick{font-size:10px}</style>`)
	if len(rows) == 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d">no snapshots yet</text></svg>`, plotLeft, height/2)
		return b.String()
	}
	x := timeScale(rows[0].Time, rows[len(rows)-1].Time)
	var maxSize int64 = 1
	maxRatio := 1.0
	for _, r := range rows {
		maxSize = max(maxSize, r.StoredSize)
		maxRatio = max(maxRatio, r.Totals.DedupRatio())
	}
	ySize := func(v int64) float64 { return bottom - float64(bottom-top)*float64(v)/float64(maxSize) }
	yRatio := func(v float64) float64 { return bottom - float64(bottom-top)*v/maxRatio }
	area := fmt.Sprintf("M%.1f,%d", x(rows[0].Time), bottom)
	line := ""
	for j, r := range rows {
		area += fmt.Sprintf(" L%.1f,%.1f", x(r.Time), ySize(r.StoredSize))
		cmd := " L"
		if j == 0 {
			cmd = "M"
		}
		line += fmt.Sprintf("%s%.1f,%.1f", cmd, x(r.Time), yRatio(r.Totals.DedupRatio()))
	}
	area += fmt.Sprintf(" L%.1f,%d Z", x(rows[len(rows)-1].Time), bottom)
	// The y axes' scales: grid lines at round sizes, labelled on the
	// left, and the ratio's values at the same heights on the right.
	for _, v := range sizeTicks(maxSize) {
		y := ySize(v)
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" class="grid"/><text x="%d" y="%.1f" class="tick">%s</text>`,
			plotLeft, y, plotRight, y, plotLeft+2, y-3, esc(frontend.HumanBytes(v)))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end" class="r tick">%.2fx</text>`, plotRight-2, y-3, maxRatio*float64(v)/float64(maxSize))
	}
	fmt.Fprintf(&b, `<path class="size" d="%s"/><path class="ratio" d="%s"/>`, area, line)
	last := rows[len(rows)-1]
	fmt.Fprintf(&b, `<text x="%d" y="14">stored %s (max %s)</text>`, plotLeft, esc(frontend.HumanBytes(last.StoredSize)), esc(frontend.HumanBytes(maxSize)))
	fmt.Fprintf(&b, `<text x="%d" y="14" text-anchor="end" class="r">dedup %.2fx (max %.2fx)</text>`, plotRight, last.Totals.DedupRatio(), maxRatio)
	fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`, plotLeft, height-6, esc(rows[0].Time.Local().Format("2006-01-02 15:04")))
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`, plotRight, height-6, esc(last.Time.Local().Format("2006-01-02 15:04")))
	b.WriteString(`</svg>`)
	return b.String()
}

// sizeTicks returns the sizes, from 0 up to at most maxSize, at which the
// growth plot draws its y axis's grid lines: round multiples (1, 2 or 5
// times a power of ten) of the largest binary unit (B, KiB, MiB...) that
// maxSize reaches, three to six of them.
func sizeTicks(maxSize int64) []int64 {
	unit := int64(1)
	for unit <= maxSize/1024 {
		unit *= 1024
	}
	top := float64(maxSize) / float64(unit) // from 1 to 1024
	step := niceStep(top / 4)
	if unit == 1 {
		step = max(step, 1) // no fractions of a byte
	}
	var ticks []int64
	for i := 0.0; i*step <= top*(1+1e-9); i++ {
		ticks = append(ticks, int64(i*step*float64(unit)))
	}
	return ticks
}

// niceStep is the smallest of 1, 2, 5 times a power of ten at least raw.
func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}
