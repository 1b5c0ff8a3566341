package plot

import (
	"fmt"
	"io"
	"math"
)

// Histogram is a distribution: a bar per bin over a log axis (latency
// tails span decades; a log axis keeps them in view), and dashed marks at
// chosen values, such as the median and the 99th percentile.
type Histogram struct {
	Title, Subtitle string
	XLabel, YLabel  string
	XUnit           string // after the marks' values in the legend
	Bins            []Bin  // in increasing order
	Marks           []Mark
}

// Bin is Count values from Low up to High, in the x axis' unit.
type Bin struct {
	Low, High float64
	Count     uint64
}

// Mark is a value to show as a vertical line, named in the legend.
type Mark struct {
	Label string
	X     float64
}

// WriteSVG draws the histogram.
func (h Histogram) WriteSVG(w io.Writer) error {
	lo, hi := math.Inf(1), math.Inf(-1)
	var most uint64
	for _, b := range h.Bins {
		if b.Low > 0 {
			lo = math.Min(lo, b.Low)
		} else { // a bin from 0 is drawn from an octave below its end
			lo = math.Min(lo, b.High/2)
		}
		hi = math.Max(hi, b.High)
		most = max(most, b.Count)
	}
	for _, m := range h.Marks {
		if m.X > 0 {
			lo, hi = math.Min(lo, m.X), math.Max(hi, m.X)
		}
	}
	if math.IsInf(lo, 1) || lo <= 0 { // nothing positive to draw
		lo, hi = 1, 2
	}
	if hi/lo < 1.1 { // a few equal samples: widen to ±5%
		lo, hi = lo/1.05, hi*1.05
	}
	// 2% of room on each side of the axis
	pad := (math.Log2(hi) - math.Log2(lo)) * 0.02
	lLo, lHi := math.Log2(lo)-pad, math.Log2(hi)+pad
	xOf := func(v float64) float64 {
		v = math.Max(v, math.Exp2(lLo))
		return plotLeft + (plotRight-plotLeft)*(math.Log2(v)-lLo)/(lHi-lLo)
	}
	top, bottom := float64(marginTop), float64(marginTop+panelHeight)
	yMax := NiceCeil(float64(most))

	var cv canvas
	cv.open(marginTop+panelHeight+marginBottom, h.Title, h.Subtitle)
	cv.frame(top, bottom, h.YLabel, yMax, 1)
	for _, v := range logTicks(math.Exp2(lLo), math.Exp2(lHi)) {
		cv.xTick(xOf(v), bottom, Number(v))
	}
	cv.xLabel(bottom, h.XLabel)
	for _, b := range h.Bins {
		x0, x1 := xOf(b.Low), xOf(b.High)
		height := panelHeight * float64(b.Count) / yMax
		cv.line(`<rect class="bin" x="%.2f" y="%.1f" width="%.2f" height="%.1f" fill="#1f77b4" fill-opacity="0.8"><title>%s to %s: %d</title></rect>`,
			x0, bottom-height, math.Max(x1-x0, 0.5), height, measure(b.Low), measure(b.High), b.Count)
	}
	for i, m := range h.Marks {
		colour := colours[(i+1)%len(colours)]
		x := xOf(m.X)
		cv.line(`<line class="mark" data-label="%s" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2" stroke-dasharray="4 3"/>`,
			Escape(m.Label), x, top, x, bottom, colour)
		cv.legend(i, top, colour, true, fmt.Sprintf("%s %.2f %s", m.Label, m.X, h.XUnit))
	}
	_, err := io.WriteString(w, cv.close())
	return err
}

// logTicks are the tick values of a log axis from lo to hi: 1, 2 and 5
// times the powers of ten in it, or, when that gives fewer than three
// (an axis narrower than a decade), evenly spaced round values.
func logTicks(lo, hi float64) []float64 {
	var ticks []float64
	for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi; e++ {
		p := math.Pow(10, e)
		for _, m := range []float64{1, 2, 5} {
			if v := m * p; v >= lo && v <= hi {
				ticks = append(ticks, v)
			}
		}
	}
	if len(ticks) >= 3 {
		return ticks
	}
	ticks = ticks[:0]
	step := NiceCeil((hi - lo) / 5)
	for n := math.Ceil(lo / step); n*step <= hi; n++ {
		ticks = append(ticks, multiple(n, step))
	}
	return ticks
}

// multiple is n*step without the float's noise (0.2*48 is not 9.6, 48/5 is).
func multiple(n, step float64) float64 {
	if step < 1 {
		return n / math.Round(1/step)
	}
	return n * step
}
