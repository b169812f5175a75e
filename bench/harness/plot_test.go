package harness

import (
	"fmt"
	"image/color"
	"slices"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
)

// look is the pen a stroke was drawn with, as a canvas sees it.
type look struct {
	r, g, b, a uint32
	width      vg.Length
	dashes     []vg.Length
}

func (l look) String() string {
	return fmt.Sprintf("rgba(%d,%d,%d,%d) width %v dashes %v", l.r>>8, l.g>>8, l.b>>8, l.a>>8, l.width, l.dashes)
}

func (l look) equal(o look) bool {
	return l.r == o.r && l.g == o.g && l.b == o.b && l.a == o.a && l.width == o.width && slices.Equal(l.dashes, o.dashes)
}

func lookOf(s draw.LineStyle) look {
	r, g, b, a := s.Color.RGBA()
	return look{r, g, b, a, s.Width, s.Dashes}
}

// stroke is one stroked path of a rendering, with the pen it used.
type stroke struct {
	look
	path vg.Path
}

// polyline returns the points of a path made of a move and straight
// segments only (a plotted line or a legend's sample line), or nil.
func (s stroke) polyline() []vg.Point {
	var pts []vg.Point
	for i, c := range s.path {
		if (i == 0) != (c.Type == vg.MoveComp) || (i > 0 && c.Type != vg.LineComp) {
			return nil
		}
		pts = append(pts, c.Pos)
	}
	return pts
}

// render draws a grid of figures as the files get it, on a canvas that
// records every call, and returns the strokes and, for every text drawn,
// the index of the first stroke after it.
func render(t *testing.T, figs [][]figure) ([]stroke, map[string][]int) {
	t.Helper()
	plots, legend, err := buildPanels(figs)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder.Canvas{}
	drawFigure(draw.NewCanvas(rec, 7*vg.Inch, 4.5*vg.Inch), "title", plots, legend)
	var strokes []stroke
	texts := map[string][]int{}
	var pen look
	var saved []look
	for _, a := range rec.Actions {
		switch a := a.(type) {
		case *recorder.SetColor:
			pen.r, pen.g, pen.b, pen.a = 0, 0, 0, 0
			if a.Color != nil {
				pen.r, pen.g, pen.b, pen.a = a.Color.RGBA()
			}
		case *recorder.SetLineWidth:
			pen.width = a.Width
		case *recorder.SetLineDash:
			pen.dashes = slices.Clone(a.Dashes)
		case *recorder.Push:
			saved = append(saved, pen)
		case *recorder.Pop:
			pen, saved = saved[len(saved)-1], saved[:len(saved)-1]
		case *recorder.Stroke:
			strokes = append(strokes, stroke{pen, a.Path})
		case *recorder.FillString:
			texts[a.String] = append(texts[a.String], len(strokes))
		}
	}
	return strokes, texts
}

// legendLook returns the pen of a legend entry's sample line: the last
// horizontal stroke of the thumbnail's width before its label.
func legendLook(t *testing.T, strokes []stroke, texts map[string][]int, label string) look {
	t.Helper()
	at := texts[label]
	if len(at) != 1 {
		t.Fatalf("legend entry %q drawn %d times, want once", label, len(at))
	}
	width := plot.NewLegend().ThumbnailWidth
	for i := at[0] - 1; i >= 0; i-- {
		if p := strokes[i].polyline(); len(p) == 2 && p[0].Y == p[1].Y && p[1].X-p[0].X == width {
			return strokes[i].look
		}
	}
	t.Fatalf("legend entry %q has no sample line", label)
	return look{}
}

// lineLooks returns the pens of the plotted lines with n points.
func lineLooks(strokes []stroke, n int) []look {
	var out []look
	for _, s := range strokes {
		if len(s.polyline()) == n {
			out = append(out, s.look)
		}
	}
	return out
}

// fakeXY is a rising line of n points.
func fakeXY(n int) plotter.XYs {
	xy := make(plotter.XYs, n)
	for i := range xy {
		xy[i] = plotter.XY{X: float64(i + 1), Y: float64((i + 1) * (i + 1))}
	}
	return xy
}

// TestLegendMatchesLines draws figures from synthetic series, each with
// its own number of points so that its stroke can be found among the
// recorded drawing calls, and checks that every legend entry's sample
// line has the colour, width and dashes of its series' line, in a single
// figure and in a grid whose second panel has a series the first lacks.
func TestLegendMatchesLines(t *testing.T) {
	lines := []series{
		{Label: "a m=1", Color: 0, Dashes: 0, Points: true},
		{Label: "a m=4", Color: 1, Dashes: 0, Points: true},
		{Label: "b m=1", Color: 0, Dashes: 1},
		{Label: "b m=4", Color: 1, Dashes: 2},
		{Label: "c m=16", Color: 2, Dashes: 3, Points: true},
	}
	const idealPoints = 5
	for i := range lines {
		lines[i].XY = fakeXY(idealPoints + 1 + i)
	}
	single := figure{Title: "single", LogY: true, Lines: lines, Ideal: fakeXY(idealPoints), IdealLabel: "ideal"}
	first := figure{Title: "first", Lines: lines[:2]}
	second := figure{Title: "second", Lines: lines}
	for _, c := range []struct {
		name   string
		figs   [][]figure
		ideal  bool
		panels int // panels that draw each of lines[2:]
	}{
		{"single figure", [][]figure{{single}}, true, 1},
		{"panels", [][]figure{{first, second}}, false, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			strokes, texts := render(t, c.figs)
			for _, s := range lines {
				want := lookOf(s.lineStyle())
				if got := legendLook(t, strokes, texts, s.Label); !got.equal(want) {
					t.Errorf("%s: legend %v, want %v", s.Label, got, want)
				}
				drawn := lineLooks(strokes, len(s.XY))
				if len(drawn) == 0 {
					t.Errorf("%s: no line drawn", s.Label)
				}
				for _, got := range drawn {
					if !got.equal(want) {
						t.Errorf("%s: line %v, want %v", s.Label, got, want)
					}
				}
			}
			if c.ideal {
				drawn := lineLooks(strokes, idealPoints)
				if got := legendLook(t, strokes, texts, "ideal"); len(drawn) != 1 || !got.equal(drawn[0]) {
					t.Errorf("ideal: legend %v, lines %v", got, drawn)
				}
			}
		})
	}
}

// TestMergeLegends: a grid's legend lists each entry once, in order of
// first appearance, and lists a label drawn in two looks twice.
func TestMergeLegends(t *testing.T) {
	entry := func(label string, s series) legendEntry {
		l, err := plotter.NewLine(fakeXY(2))
		if err != nil {
			t.Fatal(err)
		}
		l.LineStyle = s.lineStyle()
		return legendEntry{Label: label, Line: l}
	}
	a, b := entry("a", series{Color: 0}), entry("b", series{Color: 1})
	aAgain, aDashed := entry("a", series{Color: 0}), entry("a", series{Color: 0, Dashes: 1})
	got := mergeLegends([]legendEntry{a}, []legendEntry{aAgain, b}, []legendEntry{aDashed})
	if len(got) != 3 || got[0] != a || got[1] != b || got[2] != aDashed {
		t.Errorf("merged %v, want a, b and the dashed a", got)
	}
	gray := entry("g", series{})
	gray.Line.Color = color.Gray{Y: 160}
	if gray.sameLook(entry("g", series{})) {
		t.Errorf("a grey line looks like the palette's first colour")
	}
}
