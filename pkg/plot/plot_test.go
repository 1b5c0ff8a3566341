package plot

import (
	"bytes"
	"encoding/xml"
	"slices"
	"strings"
	"testing"
)

func TestAxisNumbers(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 0.0125: "0.0125", 2.5: "2.5", 12.5: "12.5", 1250: "1.25k", 3.75e6: "3.75M"} {
		if got := Number(v); got != want {
			t.Errorf("Number(%g) = %q, want %q", v, got, want)
		}
	}
	for v, want := range map[float64]float64{0: 1, 0.03: 0.05, 7: 10, 12: 20, 41.6: 50} {
		if got := NiceCeil(v); got != want {
			t.Errorf("NiceCeil(%g) = %g, want %g", v, got, want)
		}
	}
	if got := Bytes(65536) + " " + Bytes(1<<23) + " " + Bytes(512); got != "64K 8M 512" {
		t.Errorf("Bytes: %s", got)
	}
}

// TestLogTicks: decades' 1, 2 and 5 over a wide axis, round steps over
// a narrow one.
func TestLogTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   []float64
	}{
		{3, 250, []float64{5, 10, 20, 50, 100, 200}},
		{4.4, 7.1, []float64{5, 6, 7}},
		{9.5, 10.5, []float64{9.6, 9.8, 10, 10.2, 10.4}},
	} {
		if got := logTicks(c.lo, c.hi); !slices.Equal(got, c.want) {
			t.Errorf("logTicks(%g, %g) = %v, want %v", c.lo, c.hi, got, c.want)
		}
	}
}

// TestTextIsEscaped: a device or label with XML's characters keeps the
// document well-formed.
func TestTextIsEscaped(t *testing.T) {
	var b bytes.Buffer
	c := SizeChart{Title: `a<b & "c"`, Panels: []Panel{{YLabel: "x", Series: []Series{{Label: "<s>", Points: []Point{{X: 2, Y: 1}}}}}}}
	if err := c.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Texts []string `xml:"text"`
	}
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil || doc.Texts[0] != `a<b & "c"` || !strings.Contains(b.String(), `data-label="&lt;s&gt;"`) {
		t.Errorf("%v %q\n%s", err, doc.Texts, b.String())
	}
}
