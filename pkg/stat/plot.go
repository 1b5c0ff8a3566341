package stat

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/rdmactl/rdmactl/pkg/counters"
	"github.com/rdmactl/rdmactl/pkg/plot"
)

// maxPlotPoints bounds a long watch's memory: past it every other point
// is dropped, halving the time resolution.
const maxPlotPoints = 2000

// plotHistory keeps each counter's rate at each sample for --plot.
type plotHistory struct {
	times  []float64 // seconds since start
	series []*series
	byKey  map[string]*series
}

type series struct {
	label string
	kind  counters.Kind
	rates []float64 // one a time; NaN before the counter first moved
}

func (h *plotHistory) add(s sample) {
	if h.byKey == nil {
		h.byKey = map[string]*series{}
	}
	if len(h.times) >= maxPlotPoints {
		h.halve()
	}
	h.times = append(h.times, s.Elapsed.Seconds())
	for _, r := range s.Rows {
		key := r.link() + " " + r.Counter
		se := h.byKey[key]
		if se == nil {
			se = &series{label: key, kind: r.Kind}
			for range len(h.times) - 1 {
				se.rates = append(se.rates, math.NaN())
			}
			h.byKey[key] = se
			h.series = append(h.series, se)
		}
		se.rates = append(se.rates, r.PerSecond)
	}
	for _, se := range h.series {
		if len(se.rates) < len(h.times) {
			se.rates = append(se.rates, 0)
		}
	}
}

func (h *plotHistory) halve() {
	keep := func(v []float64) []float64 {
		out := v[:0]
		for i := 0; i < len(v); i += 2 {
			out = append(out, v[i])
		}
		return out
	}
	h.times = keep(h.times)
	for _, se := range h.series {
		se.rates = keep(se.rates)
	}
}

// Plot geometry, in SVG user units.
const (
	plotWidth   = 900
	panelHeight = 260
	marginLeft  = 80
	marginRight = 260 // the legend
	marginTop   = 40
	panelGap    = 60
)

var plotColours = []string{"#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#17becf", "#7f7f7f", "#bcbd22", "#e377c2"}
var alarmColours = []string{"#d62728", "#ff7f0e", "#b8860b", "#800000"}

// writeSVG draws the rates over time: one panel for traffic, and below it,
// when any moved, one for retries and errors on their own scale (a few
// retries a second vanish next to thousands of packets).
func (h *plotHistory) writeSVG(w io.Writer) error {
	var traffic, alarms []*series
	for _, se := range h.series {
		if se.kind == counters.Traffic {
			traffic = append(traffic, se)
		} else {
			alarms = append(alarms, se)
		}
	}
	panels := 1
	if len(alarms) > 0 {
		panels = 2
	}
	height := marginTop + panels*panelHeight + (panels-1)*panelGap + 50
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		plotWidth, height, plotWidth, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="15">RDMA port counters: rate per second over time</text>`+"\n", marginLeft)
	h.panel(&b, "traffic", traffic, plotColours, marginTop)
	if len(alarms) > 0 {
		h.panel(&b, "retries and errors", alarms, alarmColours, marginTop+panelHeight+panelGap)
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func (h *plotHistory) panel(b *strings.Builder, title string, ss []*series, colours []string, top int) {
	x0, x1 := float64(marginLeft), float64(plotWidth-marginRight)
	y0, y1 := float64(top+panelHeight), float64(top+20)
	tMax := 1.0
	if n := len(h.times); n > 0 && h.times[n-1] > 0 {
		tMax = h.times[n-1]
	}
	vMax := 0.0
	for _, se := range ss {
		for _, v := range se.rates {
			if !math.IsNaN(v) {
				vMax = math.Max(vMax, v)
			}
		}
	}
	vMax = plot.NiceCeil(vMax)
	xs := func(t float64) float64 { return x0 + (x1-x0)*t/tMax }
	ys := func(v float64) float64 { return y0 - (y0-y1)*v/vMax }

	fmt.Fprintf(b, `<text x="%g" y="%d" font-weight="bold">%s</text>`+"\n", x0, top+12, title)
	fmt.Fprintf(b, `<rect x="%g" y="%g" width="%g" height="%g" fill="none" stroke="#888"/>`+"\n", x0, y1, x1-x0, y0-y1)
	for i := 0; i <= 4; i++ {
		v := vMax * float64(i) / 4
		y := ys(v)
		fmt.Fprintf(b, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#ddd"/>`+"\n", x0, y, x1, y)
		fmt.Fprintf(b, `<text x="%g" y="%.1f" text-anchor="end">%s/s</text>`+"\n", x0-6, y+4, plot.Number(v))
		t := tMax * float64(i) / 4
		fmt.Fprintf(b, `<text x="%.1f" y="%g" text-anchor="middle">%ss</text>`+"\n", xs(t), y0+16, plot.Number(t))
	}
	if len(ss) == 0 {
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#888">no counter moved</text>`+"\n", (x0+x1)/2, (y0+y1)/2)
	}
	for i, se := range ss {
		colour := colours[i%len(colours)]
		var pts []string
		for j, v := range se.rates {
			if math.IsNaN(v) {
				continue
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", xs(h.times[j]), ys(v)))
		}
		fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", colour, strings.Join(pts, " "))
		ly := y1 + 14 + float64(i)*18
		fmt.Fprintf(b, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="%s" stroke-width="3"/>`+"\n", x1+14, ly-4, x1+34, ly-4, colour)
		fmt.Fprintf(b, `<text x="%g" y="%.1f">%s</text>`+"\n", x1+40, ly, plot.Escape(se.label))
	}
}
