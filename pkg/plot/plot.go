// Package plot draws the small SVG charts rdmactl writes beside its
// tables (perf --plot, stat --watch --plot): pure Go, and the same bytes
// for the same numbers, so that a chart can be compared with a golden
// file and pasted into a bug report.
package plot

import (
	"fmt"
	"math"
	"strings"
)

// The charts' geometry, in SVG user units.
const (
	width        = 900
	marginLeft   = 90
	marginRight  = 210 // the legend
	marginTop    = 60  // title and subtitle
	panelHeight  = 240
	panelGap     = 70 // the upper panel's x labels, the lower one's heading
	marginBottom = 50
	plotLeft     = marginLeft
	plotRight    = width - marginRight
)

// Colours are the series' and marks', in order.
var colours = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"}

// canvas collects an SVG document's lines.
type canvas struct{ b strings.Builder }

func (c *canvas) line(format string, args ...any) {
	fmt.Fprintf(&c.b, format, args...)
	c.b.WriteByte('\n')
}

// open starts a document of height h with its title and subtitle.
func (c *canvas) open(h int, title, subtitle string) {
	c.line(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`, width, h, width, h)
	c.line(`<rect width="100%%" height="100%%" fill="white"/>`)
	c.line(`<text x="%d" y="24" font-size="16" font-weight="bold">%s</text>`, marginLeft, Escape(title))
	if subtitle != "" {
		c.line(`<text x="%d" y="42" fill="#555">%s</text>`, marginLeft, Escape(subtitle))
	}
}

func (c *canvas) close() string {
	c.line(`</svg>`)
	return c.b.String()
}

// frame draws a panel's box between top and bottom, its y axis' label
// (rotated, left of the tick labels) and its y ticks from 0 to yMax (a
// NiceCeil): about five round steps, of at least minStep (1 for counts).
func (c *canvas) frame(top, bottom float64, yLabel string, yMax, minStep float64) {
	c.line(`<rect x="%d" y="%.1f" width="%d" height="%.1f" fill="none" stroke="#888"/>`, plotLeft, top, plotRight-plotLeft, bottom-top)
	step := math.Max(NiceCeil(yMax/5), minStep)
	for i := 0; float64(i)*step <= yMax*(1+1e-9); i++ {
		v := multiple(float64(i), step)
		y := bottom - (bottom-top)*v/yMax
		c.line(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`, plotLeft, y, plotRight, y)
		c.line(`<text x="%d" y="%.1f" text-anchor="end">%s</text>`, plotLeft-6, y+4, Number(v))
	}
	mid := (top + bottom) / 2
	c.line(`<text x="20" y="%.1f" text-anchor="middle" transform="rotate(-90 20 %.1f)">%s</text>`, mid, mid, Escape(yLabel))
}

// xTick draws a tick of the x axis at x under bottom, labelled.
func (c *canvas) xTick(x, bottom float64, label string) {
	c.line(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#888"/>`, x, bottom, x, bottom+5)
	if label != "" {
		c.line(`<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, x, bottom+18, Escape(label))
	}
}

// xLabel names the x axis under a panel ending at bottom.
func (c *canvas) xLabel(bottom float64, label string) {
	c.line(`<text x="%d" y="%.1f" text-anchor="middle">%s</text>`, (plotLeft+plotRight)/2, bottom+36, Escape(label))
}

// legend draws entry i of a panel's legend, starting at top: a short
// line (dashed for marks) in colour, then the text.
func (c *canvas) legend(i int, top float64, colour string, dashed bool, text string) {
	y := top + 14 + float64(i)*18
	dash := ""
	if dashed {
		dash = ` stroke-dasharray="4 3"`
	}
	c.line(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s" stroke-width="3"%s/>`, plotRight+14, y-4, plotRight+34, y-4, colour, dash)
	c.line(`<text x="%d" y="%.1f">%s</text>`, plotRight+40, y, Escape(text))
}

// NiceCeil rounds v up to 1, 2 or 5 times a power of ten (1 for 0 and
// below): the top of an axis.
func NiceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// Number is an axis label: v with k or M for thousands and millions,
// and up to three significant decimals below 10.
func Number(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%gM", math.Round(v/1e4)/100)
	case v >= 1e3:
		return fmt.Sprintf("%gk", math.Round(v/1e1)/100)
	case v >= 10 || v == 0:
		return fmt.Sprintf("%g", math.Round(v*10)/10)
	}
	return fmt.Sprintf("%.3g", v)
}

// Escape makes s safe as an SVG text node or attribute.
func Escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// measure is a value in a point's or bar's hover text.
func measure(v float64) string { return fmt.Sprintf("%.6g", v) }
