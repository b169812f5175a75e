package harness

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
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
	p, err := f.build()
	if err != nil {
		return err
	}
	for _, ext := range []string{".png", ".svg"} {
		if err := writeFigure(filepath.Join(dir, base+ext), "", [][]*plot.Plot{{p}}, p.Legend, figureWidth, figureHeight); err != nil {
			return err
		}
	}
	return nil
}

// savePanels writes a grid of figures sharing one legend (the first
// panel's) and an overall title, as base.png and base.svg in dir.
func savePanels(dir, base, title string, figs [][]figure, w, h vg.Length) error {
	plots := make([][]*plot.Plot, len(figs))
	var legend plot.Legend
	for i, row := range figs {
		for j, f := range row {
			p, err := f.build()
			if err != nil {
				return err
			}
			if i == 0 && j == 0 {
				legend = p.Legend
			}
			plots[i] = append(plots[i], p)
		}
	}
	for _, ext := range []string{".png", ".svg"} {
		if err := writeFigure(filepath.Join(dir, base+ext), title, plots, legend, w, h); err != nil {
			return err
		}
	}
	return nil
}

// build makes the plot of f.
func (f figure) build() (*plot.Plot, error) {
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
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.TextStyle.Font.Size = vg.Points(8)
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
			return nil, err
		}
		p.Add(l)
		p.Legend.Add(f.IdealLabel, l)
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
			return nil, err
		}
		l.Color = plotutil.Color(s.Color)
		l.Dashes = plotutil.Dashes(s.Dashes)
		l.Width = vg.Points(1.2)
		p.Add(l)
		if s.Points {
			sc, err := plotter.NewScatter(xy)
			if err != nil {
				return nil, err
			}
			sc.Color = l.Color
			sc.Shape = plotutil.Shape(s.Color)
			p.Add(sc)
			p.Legend.Add(s.Label, l, sc)
		} else {
			p.Legend.Add(s.Label, l)
		}
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
	return p, nil
}

// legendWidth is the strip right of the axes that holds the legend, so
// that it never hides a line.
const legendWidth = 1.9 * vg.Inch

// writeFigure draws a grid of plots with a legend beside them and an
// optional overall title, as PNG or SVG by path's extension.
func writeFigure(path, title string, plots [][]*plot.Plot, legend plot.Legend, w, h vg.Length) error {
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
	dc := draw.New(c)
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
	// The legend goes beside the plots, never over a line.
	for _, row := range plots {
		for _, p := range row {
			p.Legend = plot.NewLegend()
		}
	}
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
	legend.Top, legend.Left = true, true
	legend.Draw(draw.Crop(dc, w-legendWidth+vg.Points(6), 0, 0, -top-vg.Points(20)))
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
