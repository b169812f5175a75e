package harness

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// series is one line of a figure.
type series struct {
	Label  string
	XY     plotter.XYs
	Color  int  // index into plotutil's palette
	Dashes int  // index into plotutil's dash patterns
	Points bool // draw markers as well
}

// lineStyle is the one place a series' line gets its look: the line in the
// axes and its entry in the legend are the same plotter.Line with this
// style, so that the legend cannot show a dash or a colour the axes do not.
func (s series) lineStyle() draw.LineStyle {
	return draw.LineStyle{Color: plotutil.Color(s.Color), Width: vg.Points(1.2), Dashes: plotutil.Dashes(s.Dashes)}
}

// legendEntry is one line of a legend: the very plotters drawn in the
// axes, whose thumbnails the legend draws.
type legendEntry struct {
	Label  string
	Line   *plotter.Line
	Points *plotter.Scatter // nil for a line without markers
}

func (e legendEntry) thumbs() []plot.Thumbnailer {
	if e.Points != nil {
		return []plot.Thumbnailer{e.Line, e.Points}
	}
	return []plot.Thumbnailer{e.Line}
}

// sameLook reports whether two entries would draw alike: the same label,
// line style and markers.
func (e legendEntry) sameLook(o legendEntry) bool {
	return e.Label == o.Label && sameLineStyle(e.Line.LineStyle, o.Line.LineStyle) && (e.Points == nil) == (o.Points == nil) &&
		(e.Points == nil || e.Points.GlyphStyle.Shape == o.Points.GlyphStyle.Shape && sameColor(e.Points.GlyphStyle.Color, o.Points.GlyphStyle.Color))
}

func sameLineStyle(a, b draw.LineStyle) bool {
	return sameColor(a.Color, b.Color) && a.Width == b.Width && a.DashOffs == b.DashOffs && slices.Equal(a.Dashes, b.Dashes)
}

func sameColor(a, b color.Color) bool {
	if a == nil || b == nil {
		return a == b
	}
	ar, ag, ab, aa := a.RGBA()
	br, bg, bb, ba := b.RGBA()
	return ar == br && ag == bg && ab == bb && aa == ba
}

// mergeLegends joins the legends of a grid's panels in order of first
// appearance: an entry seen in an earlier panel is not repeated, and one
// that only a later panel draws (a method with no data on the first) is
// still listed. The same label drawn in two looks is listed twice, so
// that the legend never claims one look for both.
func mergeLegends(legends ...[]legendEntry) []legendEntry {
	var out []legendEntry
	for _, l := range legends {
		for _, e := range l {
			if !slices.ContainsFunc(out, e.sameLook) {
				out = append(out, e)
			}
		}
	}
	return out
}

// figure is a line plot with optional logarithmic axes.
type figure struct {
	Title, XLabel, YLabel string
	LogX, LogY            bool
	XTicks                []float64 // when set, the only x ticks, labelled with their values
	Lines                 []series
	// Ideal, when set, is drawn as a thin grey dashed reference line
	// (perfect speed-up, say) labelled IdealLabel.
	Ideal      plotter.XYs
	IdealLabel string
}

// figureWidth and figureHeight keep the PNGs small (about 40–80 KB).
const (
	figureWidth  = 7 * vg.Inch
	figureHeight = 4.5 * vg.Inch
)

// save writes the figure as base.png and base.svg in dir.
func (f figure) save(dir, base string) error {
	p, legend, err := f.build()
	if err != nil {
		return err
	}
	for _, ext := range []string{".png", ".svg"} {
		if err := writeFigure(filepath.Join(dir, base+ext), "", [][]*plot.Plot{{p}}, legend, figureWidth, figureHeight); err != nil {
			return err
		}
	}
	return nil
}

// buildPanels makes the plots of a grid of figures and the one legend they
// share, which lists every panel's lines (mergeLegends).
func buildPanels(figs [][]figure) ([][]*plot.Plot, []legendEntry, error) {
	plots := make([][]*plot.Plot, len(figs))
	var legends [][]legendEntry
	for i, row := range figs {
		for _, f := range row {
			p, legend, err := f.build()
			if err != nil {
				return nil, nil, err
			}
			legends = append(legends, legend)
			plots[i] = append(plots[i], p)
		}
	}
	return plots, mergeLegends(legends...), nil
}

// savePanels writes a grid of figures sharing one legend and an overall
// title, as base.png and base.svg in dir.
func savePanels(dir, base, title string, figs [][]figure, w, h vg.Length) error {
	plots, legend, err := buildPanels(figs)
	if err != nil {
		return err
	}
	for _, ext := range []string{".png", ".svg"} {
		if err := writeFigure(filepath.Join(dir, base+ext), title, plots, legend, w, h); err != nil {
			return err
		}
	}
	return nil
}

// build makes the plot of f and its legend, which writeFigure draws
// beside the axes: each entry holds the plotters drawn for its series.
func (f figure) build() (*plot.Plot, []legendEntry, error) {
	p := plot.New()
	p.Title.Text = f.Title
	p.Title.TextStyle.Font.Size = vg.Points(9)
	p.X.Label.Text = f.XLabel
	p.Y.Label.Text = f.YLabel
	if f.LogX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = powerTicks{}
	}
	if len(f.XTicks) > 0 {
		var t plot.ConstantTicks
		for _, x := range f.XTicks {
			t = append(t, plot.Tick{Value: x, Label: strconv.FormatFloat(x, 'g', -1, 64)})
		}
		p.X.Tick.Marker = t
	}
	if f.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = powerTicks{}
	}
	p.Add(plotter.NewGrid())
	var legend []legendEntry
	drawn := 0
	// The range of what is drawn: a logarithmic axis over a single value
	// would be widened by gonum to [v−1, v+1], which may reach 0 and panic.
	xr, yr := [2]float64{math.Inf(1), math.Inf(-1)}, [2]float64{math.Inf(1), math.Inf(-1)}
	widen := func(xy plotter.XYs) {
		for _, pt := range xy {
			xr = [2]float64{math.Min(xr[0], pt.X), math.Max(xr[1], pt.X)}
			yr = [2]float64{math.Min(yr[0], pt.Y), math.Max(yr[1], pt.Y)}
		}
	}
	widen(f.Ideal)
	if len(f.Ideal) > 0 {
		l, err := idealLine(f.Ideal)
		if err != nil {
			return nil, nil, err
		}
		p.Add(l)
		legend = append(legend, legendEntry{Label: f.IdealLabel, Line: l})
	}
	for _, s := range f.Lines {
		xy := make(plotter.XYs, 0, len(s.XY))
		for _, pt := range s.XY {
			// Logarithmic axes cannot show zero or negative values.
			if math.IsNaN(pt.X) || math.IsNaN(pt.Y) || math.IsInf(pt.X, 0) || math.IsInf(pt.Y, 0) ||
				(f.LogX && pt.X <= 0) || (f.LogY && pt.Y <= 0) {
				continue
			}
			xy = append(xy, pt)
		}
		if len(xy) == 0 {
			continue
		}
		widen(xy)
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, nil, err
		}
		l.LineStyle = s.lineStyle()
		p.Add(l)
		e := legendEntry{Label: s.Label, Line: l}
		if s.Points {
			if e.Points, err = plotter.NewScatter(xy); err != nil {
				return nil, nil, err
			}
			e.Points.Color = l.Color
			e.Points.Shape = plotutil.Shape(s.Color)
			p.Add(e.Points)
		}
		legend = append(legend, e)
		drawn++
	}
	if f.LogX && xr[0] == xr[1] && xr[0] > 0 {
		p.X.Min, p.X.Max = xr[0]/2, xr[0]*2
	}
	if f.LogY && yr[0] == yr[1] && yr[0] > 0 {
		p.Y.Min, p.Y.Max = yr[0]/2, yr[0]*2
	}
	if drawn == 0 {
		// An empty figure still gets written, with a note, so that a
		// sweep whose runs all failed does not leave stale files behind.
		p.Title.Text += "\n(no data to draw)"
		p.Add(plotter.NewFunction(func(float64) float64 { return math.NaN() }))
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 1, 10, 1, 10
	}
	return p, legend, nil
}

// legendWidth is the strip right of the axes that holds the legend, so
// that it never hides a line.
const legendWidth = 1.9 * vg.Inch

// writeFigure draws a grid of plots with a legend beside them and an
// optional overall title, as PNG or SVG by path's extension.
func writeFigure(path, title string, plots [][]*plot.Plot, legend []legendEntry, w, h vg.Length) error {
	var c interface {
		vg.CanvasSizer
		WriteTo(w io.Writer) (int64, error)
	}
	switch filepath.Ext(path) {
	case ".png":
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(110))}
	case ".svg":
		c = vgsvg.New(w, h)
	default:
		return fmt.Errorf("%s: unknown figure format", path)
	}
	drawFigure(draw.New(c), title, plots, legend)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := c.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

// drawFigure draws a grid of plots on dc with the legend in a strip to
// their right and an optional title above.
func drawFigure(dc draw.Canvas, title string, plots [][]*plot.Plot, entries []legendEntry) {
	w, h := dc.Max.X-dc.Min.X, dc.Max.Y-dc.Min.Y
	// A white background, which PNG viewers with dark themes need.
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	top := vg.Length(0)
	if title != "" {
		sty := draw.TextStyle{Color: color.Black, Font: font.From(plot.DefaultFont, 10), Handler: plot.DefaultTextHandler,
			XAlign: draw.XCenter, YAlign: draw.YTop}
		dc.FillText(sty, vg.Point{X: (w - legendWidth) / 2, Y: h - vg.Points(4)}, title)
		top = sty.Height(title) + vg.Points(8)
	}
	area := draw.Crop(dc, 0, -legendWidth, 0, -top)
	// The legend goes beside the plots, never over a line: the plots' own
	// legends stay empty.
	if len(plots) == 1 && len(plots[0]) == 1 {
		plots[0][0].Draw(area)
	} else {
		tiles := draw.Tiles{Rows: len(plots), Cols: len(plots[0]), PadX: vg.Points(12), PadY: vg.Points(12), PadTop: vg.Points(2)}
		canvases := plot.Align(plots, tiles, area)
		for i, row := range plots {
			for j, p := range row {
				p.Draw(canvases[i][j])
			}
		}
	}
	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
	legend.TextStyle.Font.Size = vg.Points(8)
	for _, e := range entries {
		legend.Add(e.Label, e.thumbs()...)
	}
	legend.Draw(draw.Crop(dc, w-legendWidth+vg.Points(6), 0, 0, -top-vg.Points(20)))
}

// powerTicks marks a logarithmic axis at powers of ten, labelled 1e-04.
type powerTicks struct{}

func (powerTicks) Ticks(min, max float64) []plot.Tick {
	ticks := plot.LogTicks{Prec: -1}.Ticks(min, max)
	labelled := 0
	for _, t := range ticks {
		if t.Label != "" && t.Value >= min && t.Value <= max {
			labelled++
		}
	}
	for i := range ticks {
		v := ticks[i].Value
		if ticks[i].Label == "" {
			// A short range gets labels at 2× and 5× as well.
			if mant := v / math.Pow(10, math.Floor(math.Log10(v)+1e-9)); labelled < 3 && (math.Abs(mant-2) < 1e-6 || math.Abs(mant-5) < 1e-6) {
				ticks[i].Label = strconv.FormatFloat(v, 'g', 3, 64)
			}
			continue
		}
		switch e := math.Round(math.Log10(v)); {
		case e >= 0 && e <= 3:
			ticks[i].Label = strconv.FormatFloat(v, 'f', 0, 64)
		default:
			ticks[i].Label = strconv.FormatFloat(v, 'e', 0, 64)
		}
	}
	return ticks
}

// idealLine is a thin grey reference line through the given points.
func idealLine(xy plotter.XYs) (*plotter.Line, error) {
	l, err := plotter.NewLine(xy)
	if err != nil {
		return nil, err
	}
	l.Color = color.Gray{Y: 160}
	l.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
	return l, nil
}
