package plot

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// SizeChart is a set of measures per message size: panels stacked over
// one log2 axis of sizes, each series a line with a dot per size.
type SizeChart struct {
	Title, Subtitle string
	Panels          []Panel
}

// Panel is one y axis of a SizeChart, from 0.
type Panel struct {
	YLabel string // "bandwidth [MB/sec]"
	Series []Series
}

// Series is one measure: a size in bytes (X, positive) and the value (Y)
// per point.
type Series struct {
	Label  string
	Points []Point
}

// Point is a series' value Y at X.
type Point struct{ X, Y float64 }

// WriteSVG draws the chart. A chart of one size spans an octave on each
// side of it, so that its dots stand in the middle.
func (c SizeChart) WriteSVG(w io.Writer) error {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range c.Panels {
		for _, s := range p.Series {
			for _, pt := range s.Points {
				lo, hi = math.Min(lo, math.Log2(pt.X)), math.Max(hi, math.Log2(pt.X))
			}
		}
	}
	if math.IsInf(lo, 1) { // no points: an empty axis
		lo, hi = 1, 1
	}
	if lo == hi {
		lo, hi = lo-1, hi+1
	}
	xOf := func(size float64) float64 {
		return plotLeft + (plotRight-plotLeft)*(math.Log2(size)-lo)/(hi-lo)
	}
	// Every power of two gets a tick; past 12 of them every other one
	// gets a label, so that they do not run into each other.
	first, last := int(math.Ceil(lo)), int(math.Floor(hi))
	labelEvery := 1
	if last-first+1 > 12 {
		labelEvery = 2
	}

	var cv canvas
	cv.open(marginTop+len(c.Panels)*panelHeight+(len(c.Panels)-1)*panelGap+marginBottom, c.Title, c.Subtitle)
	for i, p := range c.Panels {
		top := float64(marginTop + i*(panelHeight+panelGap))
		bottom := top + panelHeight
		yMax := 0.0
		for _, s := range p.Series {
			for _, pt := range s.Points {
				yMax = math.Max(yMax, pt.Y)
			}
		}
		yMax = NiceCeil(yMax)
		yOf := func(v float64) float64 { return bottom - panelHeight*v/yMax }
		cv.frame(top, bottom, p.YLabel, yMax, 0)
		for e := first; e <= last; e++ {
			label := ""
			if (e-first)%labelEvery == 0 {
				label = Bytes(math.Exp2(float64(e)))
			}
			cv.xTick(xOf(math.Exp2(float64(e))), bottom, label)
		}
		cv.xLabel(bottom, "message size [bytes], log2 scale")
		for j, s := range p.Series {
			colour := colours[j%len(colours)]
			cv.line(`<g class="series" data-label="%s">`, Escape(s.Label))
			var pts []string
			for _, pt := range s.Points {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", xOf(pt.X), yOf(pt.Y)))
			}
			cv.line(`<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`, colour, strings.Join(pts, " "))
			for _, pt := range s.Points {
				cv.line(`<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s bytes: %s</title></circle>`,
					xOf(pt.X), yOf(pt.Y), colour, Bytes(pt.X), measure(pt.Y))
			}
			cv.line(`</g>`)
			cv.legend(j, top, colour, false, s.Label)
		}
	}
	_, err := io.WriteString(w, cv.close())
	return err
}

// Bytes is a size as the axis labels it: 512, 4K, 8M.
func Bytes(v float64) string {
	n := int64(v)
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dM", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dK", n>>10)
	}
	return fmt.Sprint(n)
}
